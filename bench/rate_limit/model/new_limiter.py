"""The proposed learning (issue 39), as changes to the ported RequestLimiter (sim.OldLimiter):

M1  The provider's sustained rate, measured: a refused request is a moment its bucket was full
    (nginx limit_req: level > burst - 1; a token bucket: empty; a fixed window: spent). Between two
    such moments the provider took exactly what drained meanwhile, whatever its burst: the requests
    taken that were sent between two refusals, over the time between them, is its rate (within one
    request over the span), while a sample's accepted share is fooled by credit the bucket had at its
    start (1 of 42 refused at 200 a second is not a limit of 195). Refusals closer than kEpochGap
    after the one before belong to the same moment; spans of kMinSpan at least, within kEpochWindow.
M2  A sampled cut takes that measurement as its estimate when there is one, and paces at it
    (no 10% backoff below a measurement); a rate that "ran clean" above it ran on the burst's credit
    and is no floor.
M3  A wall - kWall refusals in a row, in send order, after a request taken (nothing pending among
    them) - is a spent window (or a bucket's credit gone), not a share of the rate refused: a sample
    of it reads "took none of 20", a quarter and probing, the 1.26x loop of a fixed window. Without a
    measurement, the cut goes to what the provider took in the second before the wall (never up,
    never below a quarter), a rate that ran clean above that is forgotten, no probing, and the
    wall's 429s are not the new rate's sample (kCutGrace, as after a cut).
Set LIMITER_NO_MEASURE=1 to run M3 alone.
"""
import os

import sim

NO_MEASURE = os.environ.get("LIMITER_NO_MEASURE") == "1"

kEpochGap = 0.05     # s: refusals closer than this to the last one are the same full bucket
kMinSpan = 1.0       # s: the shortest span between two full-bucket moments worth a measurement
kEpochWindow = 10.0  # s: how far back the measurement looks
kWall = 10           # refusals in a row that are a wall
kSlice = 0.25        # s: a span counts only if each slice of it sent at least the measured rate


class NewLimiter(sim.OldLimiter):
    def __init__(self, ceiling, loop, log=None):
        super().__init__(ceiling, loop, log)
        self.records = []   # [sent_at, state] in send order: 0 pending, 1 taken, 2 refused
        self.measured = 0.0  # per minute; 0: none

    def acquire(self):
        ticket = yield from super().acquire()
        if not self.open:
            rec = [ticket.admitted, 0]
            self.records.append(rec)
            ticket.rec = rec
        return ticket

    def report(self, ticket, rate_limited):
        rec = ticket.rec
        if rec is not None:
            rec[1] = 2 if rate_limited else 1
            self.measure()
        super().report(ticket, rate_limited)

    def measure(self):
        if NO_MEASURE:
            return
        now = self.now()
        while self.records and self.records[0][0] < now - kEpochWindow:
            self.records.pop(0)
        # full-bucket moments: the first refusal after a gap of kEpochGap
        epochs = []
        last_refused = None
        for i, (t, state) in enumerate(self.records):
            if state == 0:
                break  # the settled prefix only
            if state == 2:
                if last_refused is None or t - last_refused > kEpochGap:
                    epochs.append(i)
                last_refused = t
        if len(epochs) < 2:
            return
        b = epochs[-1]
        # the oldest epoch at least kMinSpan before the newest, every request between them answered
        for a in epochs[:-1]:
            span = self.records[b][0] - self.records[a][0]
            if span < kMinSpan:
                break
            between = self.records[a + 1:b]
            taken = sum(1 for _, state in between if state == 1)
            measured = 60.0 * taken / span
            # saturated throughout: each slice of the span sent at least the measured rate (a
            # slice paced below it let the provider's bucket drain, and the count would be short)
            t0 = self.records[a][0]
            slices = max(1, int(span / kSlice))
            counts = [0] * slices
            for t, _ in between:
                counts[min(slices - 1, int((t - t0) / span * slices))] += 1
            if min(counts) < 0.9 * measured / 60.0 * span / slices:
                continue
            if measured == self.measured:
                return
            self.measured = measured
            if self.log:
                self.log(f"{now - 3600:8.3f} measured {taken} taken over {span:.2f} s: {self.measured / 60:.1f}/s")
            return

    def in_wall(self):
        """The newest reported requests, in send order, end in kWall refusals after a take."""
        run = 0
        newest = True
        for t, state in reversed(self.records):
            if state == 0 and newest:
                continue  # sent after the newest refusal, not answered yet
            newest = False
            if state == 2:
                run += 1
                continue
            return state == 1 and run >= kWall  # a request still pending among them may be a take
        return False

    def cut(self, now, sampled):
        if sampled and self.measured <= 0 and self.in_wall():
            # M3: a spent window, not a share of the rate refused: what the provider took in the
            # second before the wall (sent, by send time) is the estimate, not "none of 20"; the
            # wall's 429s are not the new rate's sample (kCutGrace)
            first = None
            for i in range(len(self.records) - 1, -1, -1):
                if self.records[i][1] == 1:
                    break
                if self.records[i][1] == 2:
                    first = self.records[i][0]
            onset = first if first is not None else now
            took = sum(1 for t, st in self.records if onset - 1.0 <= t < onset and st != 2)
            before = self.rate
            rate = min(before, max(sim.kMinPerMinute, 60.0 * took, before / sim.kMaxCut))
            if self.log:
                self.log(f"{now - 3600:8.3f} wall: {self.refused} of {self.sent} refused at {before / 60:.1f}/s; took {took} in the second before")
            self.accepted_at_cut = max(sim.kMinPerMinute, 60.0 * took)
            self.refused_at = before
            self.clean_at = min(self.clean_at, rate)
            self.probing = False
            self.set_rate(rate, now)
            self.last_cut = now
            self.last_creep = now
            self.grace_until = now + sim.kCutGrace
            return
        if sampled and self.measured > 0:
            # M2: the measured rate is the estimate; what ran clean above it ran on credit
            self.clean_at = min(self.clean_at, self.measured)
            before = self.rate
            self.accepted_at_cut = max(sim.kMinPerMinute, self.measured)
            self.refused_at = before
            self.lone_refusals = self.lone_refusals + 1 if self.refused <= 1 else 0
            rate = max(sim.kMinPerMinute, self.measured, before / sim.kMaxCut)
            self.probing = False
            if self.limit is not None:
                rate = min(rate, self.limit)
            excess = self.refused > (1 - sim.kBackoff) * self.sent
            if self.log:
                self.log(f"{now - 3600:8.3f} cut to the measurement: {self.refused} of {self.sent} refused at {before / 60:.1f}/s")
            if rate < before:
                self.set_rate(rate, now)
                self.last_cut = now
                self.grace_until = now + sim.kCutGrace if excess else 0.0
            else:
                self.sent = self.refused = self.forgiven = 0
            self.last_creep = now
            return
        super().cut(now, sampled)
