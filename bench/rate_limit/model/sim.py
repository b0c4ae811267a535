"""A discrete-event model of bench/rate_limit_bench.sh (issue 39), to reason about
services/state/request_limiter.cpp without building C++.

- Limiter: a line-by-line port of RequestLimiter (request_limiter.cpp at 81123a6),
  requests only (no tokens_per_minute).
- Nginx: ngx_http_limit_req_lookup's arithmetic (integer milli-requests, ms clock,
  refused requests leave the node alone), `burst=B nodelay`.
- The eval: CONC cases in flight, each a generation then a judge call through the same
  limiter (PROVIDERS=1); a request reaches nginx 0.2-1.5 ms after its slot, an answer
  takes DELAY ms, a 429 1 ms, then RetryingProvider sleeps Retry-After (1 s) plus
  U(0, 250 ms); the 9th 429 of one call loses its case.

Usage: python3 sim.py [--burst 20 | --window] [--rpm 12000] [--seeds 5] [--impl old|new]
                     [--retry ra|full|zero] [--jitter 0.2 0.4] [--conc 64] [--trace] [--timeline]
  --impl new: new_limiter.py (proposal B, plus the measurement unless LIMITER_NO_MEASURE=1)
  --retry full: proposal A (a paced 429 waits U(0, Retry-After))
  other knobs: --stalls RUN_MS STALL_MS, --late MS, --start-spread MS, --delay MS, --rate, --calls, --cases
See docs/development/rate-limit-model.md. table.sh prints its table.
"""
import argparse
import heapq
import math
import random
import statistics
import sys

# ------------------------------------------------------------------ event loop
class Loop:
    # late: mean of an exponential lateness added to every wake-up (a busy CPU), seconds
    def __init__(self, late=0.0, rng=None):
        self.now = 3600.0  # VirtualClock starts an hour in (TimePoint{} is 0: "none")
        self.heap = []
        self.seq = 0
        self.late = late
        self.rng = rng
        self.stalls = None  # (run mean, stall mean) seconds: the process is descheduled at times

    def _stall_end(self, t):
        # a schedule of stalls, generated lazily: [start, end) intervals
        if not hasattr(self, "_sched"):
            self._sched = []
            self._sched_t = self.now
        while self._sched_t <= t + 1:
            run = self.rng.expovariate(1.0 / self.stalls[0])
            stall = self.rng.expovariate(1.0 / self.stalls[1])
            self._sched.append((self._sched_t + run, self._sched_t + run + stall))
            self._sched_t += run + stall
        import bisect
        i = bisect.bisect_right(self._sched, (t, float("inf"))) - 1
        if i >= 0 and self._sched[i][0] <= t < self._sched[i][1]:
            return self._sched[i][1]
        return t

    def spawn(self, gen, at=None):
        self._push(self.now if at is None else at, gen, None)

    def _push(self, t, gen, value):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, gen, value))

    def run(self):
        while self.heap:
            t, _, gen, value = heapq.heappop(self.heap)
            self.now = max(self.now, t)
            self._step(gen, value)

    def _step(self, gen, value):
        try:
            req = gen.send(value)
        except StopIteration:
            return
        # a generator yields the absolute time to wake at
        t = max(req, self.now)
        if self.late > 0 and req > self.now:
            t += self.rng.expovariate(1.0 / self.late)
        if self.stalls:
            t = self._stall_end(t)
        self._push(t, gen, None)


# ------------------------------------------------------------------ nginx limit_req
class Nginx:
    def __init__(self, rate, burst):
        self.rate = rate * 1000  # ctx->rate: milli-requests a second
        self.burst = burst * 1000
        self.excess = 0
        self.last = None
        self.admitted = []
        self.refused = []

    def take(self, now):
        ms_now = int(now * 1000)
        if self.last is None:
            self.excess, self.last = 0, ms_now
            self.admitted.append(now)
            return True
        ms = ms_now - self.last
        excess = self.excess - self.rate * abs(ms) // 1000 + 1000
        if excess < 0:
            excess = 0
        if excess > self.burst:
            self.refused.append(now)
            return False
        self.excess, self.last = excess, ms_now
        self.admitted.append(now)
        return True


class PerSecond:
    """tests/services/state/request_limiter_test.cpp's PerSecondProvider: `per_second` in each
    second of the clock, the rest refused."""
    def __init__(self, per_second):
        self.per_second = per_second
        self.second = None
        self.taken = 0
        self.admitted = []
        self.refused = []

    def take(self, now):
        second = math.floor(now)
        if second != self.second:
            self.second, self.taken = second, 0
        if self.taken == self.per_second:
            self.refused.append(now)
            return False
        self.taken += 1
        self.admitted.append(now)
        return True


# ------------------------------------------------------------------ the limiter (port)
kMinPerMinute = 6
kBackoff = 0.9
kStepShare = 0.05
kProbeFactor = 2
kMaxCut = 4
kMinSample = 20
kNearRefused = 0.95
kTargetOver = 1.1
kMaxSampledCut = 0.8
kSearchStep = 0.01
kSearchGrowth = 1.5
kStrayShare = 0.01
kProbeSeconds = 0.5
kSettleSeconds = 30
kLoneSettleSeconds = 2
kCutGrace = 1.0


class Ticket:
    __slots__ = ("admitted", "rec")

    def __init__(self, admitted):
        self.admitted = admitted
        self.rec = None


class OldLimiter:
    def __init__(self, ceiling, loop, log=None):
        self.loop = loop
        self.limit = ceiling
        self.rate = ceiling
        now = loop.now
        self.last_creep = self.last_cut = self.anchor_time = self.changed = now
        self.window_start = now
        self.probing = False
        # Counters (whole numbers) and rates or times (seconds), all zero at the start.
        self.window_sent = self.tail = self.anchor_position = self.lone_refusals = 0
        self.sent = self.refused = self.forgiven = self.waited = 0
        self.u_last_go = self.last_go = self.grace_until = 0.0
        self.accepted_at_cut = self.refused_at = self.probe_cap = self.clean_at = 0.0
        self.last_window_per_second = 0.0
        self.log = log
        self.history = [(now, self.rate)]

    @property
    def open(self):
        return self.rate is None

    def now(self):
        return self.loop.now

    def go_unlimited(self):
        if not self.open:
            return None
        now = self.now()
        if now - self.window_start >= 1:
            return None
        self.window_sent += 1
        self.u_last_go = max(self.u_last_go, now)
        return Ticket(now)

    def fold(self):
        self.last_go = max(self.last_go, self.u_last_go)

    @staticmethod
    def span(places, per_minute):
        return 60.0 * places / per_minute

    def slot(self, position, now):
        if self.rate is None:
            return now
        return max(now, self.anchor_time + self.span(position - self.anchor_position, self.rate))

    def set_rate(self, rate, now):
        first_waiting = self.tail
        start = now
        if self.rate is not None:
            passed = (now - self.anchor_time) * self.rate / 60.0
            first_waiting = min(max(self.anchor_position + math.floor(passed) + 1, self.anchor_position), self.tail)
            if rate is not None and first_waiting > self.anchor_position:
                last_passed = self.anchor_time + self.span(first_waiting - 1 - self.anchor_position, self.rate)
                start = max(now, last_passed + self.span(1, rate))
        self.fold()
        if rate is not None and self.last_go != 0.0:
            start = max(start, self.last_go + self.span(1, rate))
        self.rate = rate
        self.anchor_position = first_waiting
        self.anchor_time = start
        self.changed = now
        self.sent = self.refused = self.forgiven = self.waited = 0
        self.history.append((now, rate))
        if self.log:
            self.log(f"{now - 3600:8.3f} rate -> {rate and rate / 60:.1f}/s probing={self.probing} clean={self.clean_at / 60:.1f} refused_at={self.refused_at / 60:.1f} acc={self.accepted_at_cut / 60:.1f}")

    def count_unlimited(self, now):
        seconds = now - self.window_start
        if seconds >= 1:
            self.last_window_per_second = self.window_sent / seconds
            self.window_sent = 0
            self.window_start = now
        self.window_sent += 1

    def creep_interval(self):
        wide = self.rate is not None and self.refused_at - self.rate > (kTargetOver - 1) * self.refused_at
        return kProbeSeconds if (self.probing or wide) else 1.0

    def settle_time(self):
        seconds = kSettleSeconds
        if self.lone_refusals > 0 and self.rate is not None:
            requests = 5 * kMinSample * 2.0 ** min(self.lone_refusals - 1, 8)
            seconds = min(max(requests * 60.0 / self.rate, 1.0 * kLoneSettleSeconds), seconds)
        return seconds

    def searching(self):
        return self.clean_at > 0 and self.refused_at > self.clean_at

    def next_creep(self, now):
        if self.rate is None or (self.limit is not None and self.rate >= self.limit):
            return None
        return max(now, max(self.last_creep, self.last_cut) + self.creep_interval())

    def creep(self, now):
        if self.rate is None:
            return
        if now - max(self.last_creep, self.last_cut) < self.creep_interval():
            return
        enough = min(kMinSample / 2.0, self.rate / 120.0)
        refused = self.refused - self.forgiven
        if refused > 0 and self.sent >= kMinSample:
            self.cut(now, True)
            return
        if refused > 0 or self.sent < enough:
            self.last_creep = now
            return
        rate = self.rate
        ceiling = self.limit
        self.clean_at = max(self.clean_at, rate)
        self.grace_until = 0.0
        if self.clean_at >= self.refused_at:
            self.lone_refusals = 0
        binding = self.waited > 0 or (self.tail > 0 and self.slot(self.tail - 1, now) > now)
        if ceiling is None and not binding and (rate >= self.probe_cap if self.probing else rate >= 2 * self.accepted_at_cut):
            rate = None
            self.probing = False
        elif self.probing:
            rate *= kProbeFactor
        elif self.searching():
            if self.refused_at - rate > kSearchStep * self.refused_at:
                rate = min(rate + (self.refused_at - rate) / 2, kSearchGrowth * rate)
            elif now - self.last_cut >= self.settle_time():
                rate = self.refused_at * (1 + kSearchStep)
        else:
            target = min(self.refused_at, kTargetOver * self.accepted_at_cut)
            rate += (target - rate) / 2 if rate < kNearRefused * target else kStepShare * self.accepted_at_cut
        self.last_creep = now
        if rate is not None and ceiling is not None:
            rate = min(rate, ceiling)
        if rate != self.rate:
            self.set_rate(rate, now)

    def rate_before_cut(self, now):
        if self.rate is not None:
            return self.rate
        window = max(1.0, now - self.window_start)
        return max(60.0 * self.window_sent / window, 60.0 * self.last_window_per_second, 60.0 * kMinSample,
                   2 * self.accepted_at_cut)

    def cut(self, now, sampled):
        n = self.sent
        before = self.rate_before_cut(now)
        estimate = before
        nxt = estimate
        if sampled:
            refused_share = self.refused / n
            estimate = self.rate * (1 - refused_share)
            nxt = kBackoff * estimate if refused_share > 1 - kBackoff else estimate
            if refused_share < 0.5:
                nxt = max(nxt, kMaxSampledCut * before)
                estimate = max(estimate, nxt)
            if self.clean_at >= before and (self.refused <= 1 or refused_share <= kStrayShare):
                if self.log:
                    self.log(f"{now - 3600:8.3f} held: {self.refused} of {self.sent} at {before / 60:.1f}/s")
                if self.sent > 10 * kMinSample:
                    self.sent //= 2
                    self.refused //= 2
                self.forgiven = self.refused
                self.last_creep = now
                return
            if self.clean_at >= before:
                self.clean_at = 0
            estimate = max(estimate, self.clean_at)
        nxt = max(nxt, self.clean_at)
        floor = before / kMaxCut
        excess = sampled and self.refused > (1 - kBackoff) * n
        self.accepted_at_cut = max(kMinPerMinute, estimate)
        self.refused_at = before if sampled else 0
        self.lone_refusals = self.lone_refusals + 1 if (sampled and self.refused <= 1) else 0
        rate = max(kMinPerMinute, nxt, floor)
        self.probing = (not sampled) or nxt < floor
        if self.probing:
            self.probe_cap = 2 * max(before, self.clean_at)
        if self.limit is not None:
            rate = min(rate, self.limit)
        if self.log:
            self.log(f"{now - 3600:8.3f} cut: {self.refused} of {self.sent} refused at {before / 60:.1f}/s")
        self.set_rate(rate, now)
        self.last_cut = now
        self.last_creep = now
        self.grace_until = now + kCutGrace if excess else 0.0

    def acquire(self):
        t = self.go_unlimited()
        if t is not None:
            return t
        now = self.now()
        self.creep(now)
        position = self.tail
        slot = self.slot(position, now)
        if slot == now and self.rate is not None:
            self.anchor_position = position
            self.anchor_time = now
        self.tail += 1
        while True:
            now = self.now()
            self.creep(now)
            slot = self.slot(position, now)
            if self.rate is not None and slot <= now:
                slot = max(slot, self.last_go + self.span(1, self.rate))
            if slot <= now:
                self.last_go = now
                self.sent += 1
                if self.rate is None:
                    self.count_unlimited(now)
                return Ticket(now)
            nc = self.next_creep(now)
            wake = min(slot, nc if nc is not None else slot)
            self.waited += 1
            yield wake

    def report(self, ticket, rate_limited):
        if not rate_limited and self.open:
            return
        if not rate_limited:
            if ticket.admitted >= self.last_cut:
                self.grace_until = 0.0
            return
        now = self.now()
        if ticket.admitted < self.changed:
            return
        if ticket.admitted < self.grace_until:
            self.sent -= 1
            return
        self.refused += 1
        if self.rate is not None and self.sent >= kMinSample:
            self.cut(now, True)
        elif self.rate is None:
            self.cut(now, False)
        elif self.clean_at > 0 and self.rate > self.clean_at:
            self.refused_at = self.rate
            self.lone_refusals += 1
            self.accepted_at_cut = max(self.accepted_at_cut, self.clean_at)
            self.probing = False
            self.set_rate(self.clean_at, now)
            self.last_cut = now
            self.last_creep = now


# ------------------------------------------------------------------ the eval
class Eval:
    def __init__(self, limiter_factory, burst, seed, cases=1000, conc=64, rate=100, delay=0.100, retries=8,
                 trace=False, late=0.0, jitter=(0.0002, 0.0015)):
        self.jitter = jitter
        self.start_spread = 0.0
        self.calls = 2
        self.rate = rate
        self.retry_mode = "ra"
        self.rng = random.Random(seed)
        self.loop = Loop(late, random.Random(seed + 1000))
        self.nginx = Nginx(rate, burst)
        self.limiter = limiter_factory(self.loop, (lambda s: print(s)) if trace else None)
        self.cases_left = cases
        self.conc = conc
        self.delay = delay
        self.retries = retries
        self.lost = 0
        self.done = 0
        self.end = None

    def request(self):
        refusals = 0
        while True:
            ticket = yield from self.limiter.acquire()
            yield self.loop.now + self.rng.uniform(self.jitter[0], self.jitter[1])
            taken = self.nginx.take(self.loop.now)
            yield self.loop.now + (self.delay if taken else 0.001)
            self.limiter.report(ticket, not taken)
            if taken:
                return True
            refusals += 1
            if refusals > self.retries:
                return False
            yield self.loop.now + self.retry_wait(refusals)

    def retry_wait(self, refusals):
        if self.retry_mode == "full":
            return 1.0 * self.rng.random()
        if self.retry_mode == "zero":
            return 0.0
        return 1.0 + self.rng.uniform(0, 0.25)

    def case(self):
        while self.cases_left > 0:
            self.cases_left -= 1
            ok = yield from self.request()
            if ok and self.calls == 2:
                ok = yield from self.request()
            if not ok:
                self.lost += 1
            self.done += 1
        self.end = self.loop.now

    def run(self):
        start = self.loop.now
        for i in range(self.conc):
            self.loop.spawn(self.case(), start + self.rng.uniform(0, self.start_spread))
        self.loop.run()
        return self.loop.now - start


def per_second(times, t0):
    counts = {}
    for t in times:
        s = int(t - t0)
        counts[s] = counts.get(s, 0) + 1
    return counts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--burst", type=int, default=20)
    p.add_argument("--rpm", type=float, default=None)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--conc", type=int, default=64)
    p.add_argument("--impl", default="old")
    p.add_argument("--trace", action="store_true")
    p.add_argument("--jitter", type=float, nargs=2, default=[0.2, 1.5], help="ms from slot to nginx, uniform")
    p.add_argument("--start-spread", type=float, default=0.0, help="ms over which the first requests start")
    p.add_argument("--retry", default="ra", help="ra: Retry-After + U(0, 250 ms); full: U(0, Retry-After); zero")
    p.add_argument("--stalls", type=float, nargs=2, default=None, help="ms: mean run, mean stall of the process")
    p.add_argument("--delay", type=float, default=100, help="ms per answer")
    p.add_argument("--rate", type=int, default=100, help="nginx requests/s")
    p.add_argument("--calls", type=int, default=2, help="requests per case (1: no judge)")
    p.add_argument("--window", action="store_true", help="the unit test's PerSecondProvider instead of nginx")
    p.add_argument("--late", type=float, default=0.0, help="mean wake-up lateness, ms")
    p.add_argument("--timeline", action="store_true")
    a = p.parse_args()
    if a.impl == "old":
        factory = lambda loop, log: OldLimiter(a.rpm, loop, log)
    else:
        import new_limiter
        factory = lambda loop, log: new_limiter.NewLimiter(a.rpm, loop, log)
    walls = []
    for seed in range(1, a.seeds + 1):
        e = Eval(factory, a.burst, seed, cases=a.cases, conc=a.conc, delay=a.delay / 1000, rate=a.rate, trace=a.trace, late=a.late / 1000, jitter=(a.jitter[0] / 1000, a.jitter[1] / 1000))
        e.start_spread = a.start_spread / 1000
        if a.window:
            e.nginx = PerSecond(a.rate)
        e.calls = a.calls
        if a.stalls:
            e.loop.stalls = (a.stalls[0] / 1000, a.stalls[1] / 1000)
        e.retry_mode = a.retry
        wall = e.run()
        walls.append(wall)
        n429 = len(e.nginx.refused)
        late = sum(1 for t in e.nginx.refused if t - 3600 >= 1)
        print(f"seed {seed}: {wall:.2f} s ({wall / (a.calls * a.cases / a.rate):.3f}x), lost {e.lost}, 429s {n429} ({late} after 1 s), "
              f"final rate {(e.limiter.rate or 0) / 60:.1f}/s")
        if a.timeline:
            ok = per_second(e.nginx.admitted, 3600)
            bad = per_second(e.nginx.refused, 3600)
            print("  200s/429s per second: " + " ".join(f"{ok.get(s, 0)}/{bad.get(s, 0)}" for s in range(int(wall) + 1)))
    walls.sort()
    print(f"median {statistics.median(walls):.2f} s = {statistics.median(walls) / (a.calls * a.cases / a.rate):.3f}x "
          f"(min {walls[0]:.2f}, max {walls[-1]:.2f})")


if __name__ == "__main__":
    main()
