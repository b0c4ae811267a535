#include "services/state/shared_limiter.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <cmath>

namespace skillrunner::state {
namespace {

constexpr std::chrono::minutes kKeyTtl{10};  // a provider unused this long starts afresh

// Every script: Redis's clock, the constants of limiter.h (ARGV[1..17],
// Constants() below), and the provider's state as RequestLimiter keeps it:
// the queue (place p starts at atime + (p - apos) / rate; a rate change
// re-anchors at the first place not yet reached), the sample of the current
// rate, and what was learned. Cut and Creep are RequestLimiter's CutLocked
// and CreepLocked.
constexpr std::string_view kPrelude = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ceiling, minimum, backoff, maxcut = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local sample, samplecut, factor, step = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local near, over, searchstep, probems = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local ttl, settlems, stray, lonems = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])
local growth = tonumber(ARGV[17])
local names = {'rate', 'tail', 'apos', 'atime', 'tnext', 'cut', 'creep', 'changed', 'sent', 'refused', 'accepted',
  'probing', 'refusedat', 'probecap', 'clean', 'waited', 'lone', 'wstart', 'wsent', 'wlast', 'forgiven', 'grace',
  'screep', 'hold'}
local function load()
  local v = redis.call('HMGET', KEYS[1], unpack(names))
  local s = {fresh = not v[6]}
  for i, name in ipairs(names) do s[name] = tonumber(v[i]) end
  s.tail, s.apos, s.atime, s.tnext = s.tail or 0, s.apos or 0, s.atime or now, s.tnext or 0
  s.cut, s.creep, s.changed = s.cut or now, s.creep or now, s.changed or now
  s.sent, s.refused, s.accepted, s.probing = s.sent or 0, s.refused or 0, s.accepted or 0, v[12] == '1'
  s.refusedat, s.probecap, s.clean, s.waited = s.refusedat or 0, s.probecap or 0, s.clean or 0, s.waited or 0
  s.lone, s.wstart, s.wsent, s.wlast = s.lone or 0, s.wstart or now, s.wsent or 0, s.wlast or 0
  s.forgiven, s.grace, s.screep, s.hold = s.forgiven or 0, s.grace or 0, s.screep or 0, s.hold or 0
  if s.fresh and ceiling > 0 then s.rate = ceiling end
  return s
end
local function save(s)
  redis.call('HSET', KEYS[1], 'rate', s.rate and string.format('%.6f', s.rate) or '', 'tail', s.tail, 'apos', s.apos,
    'atime', string.format('%.3f', s.atime), 'tnext', string.format('%.3f', s.tnext), 'cut', s.cut, 'creep', s.creep,
    'changed', s.changed, 'sent', s.sent, 'refused', s.refused, 'accepted', string.format('%.6f', s.accepted),
    'probing', s.probing and '1' or '0', 'refusedat', string.format('%.6f', s.refusedat),
    'probecap', string.format('%.6f', s.probecap), 'clean', string.format('%.6f', s.clean), 'waited', s.waited,
    'lone', s.lone, 'wstart', s.wstart, 'wsent', s.wsent, 'wlast', string.format('%.6f', s.wlast), 'forgiven', s.forgiven,
    'grace', s.grace, 'screep', s.screep, 'hold', s.hold)
  redis.call('PEXPIRE', KEYS[1], ttl)
end
local function slot_of(s, p)
  if not s.rate then return now end
  return math.max(now, s.atime + (p - s.apos) * 60000 / s.rate)
end
-- SetRateLocked: the places whose slot passed are gone; the rest follow the
-- last of those at the new pace, and the new rate is a new sample.
local function set_rate(s, newrate)
  local first, start = s.tail, now
  if s.rate then
    first = math.min(s.tail, math.max(s.apos, s.apos + math.floor((now - s.atime) * s.rate / 60000) + 1))
    if newrate and first > s.apos then
      start = math.max(now, s.atime + (first - 1 - s.apos) * 60000 / s.rate + 60000 / newrate)
    end
  end
  s.rate, s.apos, s.atime = newrate, first, start
  s.changed, s.sent, s.refused, s.waited, s.forgiven, s.screep = now, 0, 0, 0, 0, 0
end
-- between a rate that ran clean and a faster one refused (RequestLimiter::SearchingLocked)
local function searching(s)
  return s.clean > 0 and s.refusedat > s.clean
end
-- ms between creeps: probing, or well below a rate refused, kProbeSeconds; else a second
local function creep_ms(s)
  local wide = s.rate and s.refusedat - s.rate > (over - 1) * s.refusedat
  return (s.probing or wide) and probems or 1000
end
-- ms to the next chance of a rise (a creep), -1 when none (at the ceiling, unlimited)
local function rise_in(s)
  if not s.rate or (ceiling > 0 and s.rate >= ceiling) then return -1 end
  return math.max(1, math.max(s.creep, s.cut) + creep_ms(s) - now, s.probing and s.hold - now or 0)
end
-- One more sent at the current rate; unlimited, the pace is also counted a second at a time
-- (RequestLimiter::CountUnlimitedLocked)
local function went(s)
  s.sent = s.sent + 1
  s.screep = s.screep + 1  -- since the last creep: whether the rate was reached
  if s.rate then return end
  if now - s.wstart >= 1000 then
    s.wlast, s.wstart, s.wsent = s.wsent * 1000 / (now - s.wstart), now, 0
  end
  s.wsent = s.wsent + 1
end
local function cut(s, sampled)
  local before = s.rate or math.max(60 * s.wsent / math.max(1, (now - s.wstart) / 1000), 60 * s.wlast, 60 * sample,
    2 * s.accepted)
  -- No sample: halved here, unlike RequestLimiter (see the note in Cut's C++ twin): probing up from the
  -- burst's own rate left 12-22% refused after the first 3 s in 2 of 6 runs of the two-replica 429 test.
  -- Never below kMinSample a second, which is no measured pace: halved to 600 a minute, a stray 429 of
  -- the burst's retries made 600 "refused", and the test's replicas crept up from there at half the
  -- server's 1,200 for the whole run.
  local half = math.max(before / 2, 60 * sample)
  local estimate, nextrate = half, half
  if sampled then
    local share = s.refused / s.sent
    estimate = s.rate * (1 - share)
    nextrate = share > 1 - backoff and backoff * estimate or estimate
    if share < 0.5 then
      nextrate = math.max(nextrate, samplecut * before)
      estimate = math.max(estimate, nextrate)
    end
    if s.clean >= before and (s.refused <= 1 or share <= stray) then
      -- one or a few refused at a rate that ran clean: jitter, held (RequestLimiter's CutLocked)
      if s.sent > 10 * sample then s.sent, s.refused = math.floor(s.sent / 2), math.floor(s.refused / 2) end
      s.forgiven = s.refused  -- held as jitter: they do not stop a rise (creep)
      s.creep, s.screep = now, 0
      return
    end
    if s.clean >= before then
      -- more at a rate that ran clean: jitter at the limit or a limit fallen, a step down (the C++ twin)
      if share < 0.5 then
        nextrate = math.max(nextrate, (1 - step) * before)
        estimate = math.max(estimate, nextrate)
      end
      s.clean = 0
    end
    estimate = math.max(estimate, s.clean)
  end
  nextrate = math.max(nextrate, s.clean)  -- refused above what ran clean: no lower than that
  local floor = before / maxcut
  -- a sampled cut of the excess: the provider's window after it is not the new rate's sample (kCutGrace)
  local excess = sampled and s.refused > (1 - backoff) * s.sent
  s.accepted = math.max(minimum, estimate)
  s.refusedat = sampled and before or 0
  s.lone = (sampled and s.refused <= 1) and s.lone + 1 or 0
  local newrate = math.max(minimum, nextrate, floor)
  s.probing = not sampled or nextrate < floor
  if s.probing then s.probecap = 2 * math.max(before, s.clean) end
  if ceiling > 0 then newrate = math.min(newrate, ceiling) end
  set_rate(s, newrate)
  s.cut, s.creep, s.grace, s.screep = now, now, excess and now + 1000 or 0, 0
end
local function creep(s)
  if not s.rate then return end
  if now - math.max(s.creep, s.cut) < creep_ms(s) then return end
  local refused = s.refused - s.forgiven
  if refused > 0 and s.sent >= sample then return cut(s, true) end
  if refused > 0 or s.sent < math.min(sample / 2, s.rate / 120) then  -- not enough to teach
    s.creep, s.screep = now, 0
    return
  end
  if s.probing and now < s.hold then return end  -- no probe into a Retry-After that is not over
  local newrate = s.rate
  local binding = s.waited > 0 or (s.tail > 0 and slot_of(s, s.tail - 1) > now)
  -- reached: the requests sent since the last creep came to kReachedShare (0.9) of the rate, or one
  -- waits for its place now
  local since = now - math.max(s.creep, s.changed)
  local reached = (s.tail > 0 and slot_of(s, s.tail - 1) > now) or (since > 0 and s.screep * 60000 >= 0.9 * newrate * since)
  if reached then s.clean = math.max(s.clean, newrate) end  -- it ran clean
  s.grace = 0  -- and the provider's window after the cut is over
  if s.clean >= s.refusedat then s.lone = 0 end  -- past the rate refused: that was jitter
  if ceiling == 0 and not binding and
      ((s.probing and newrate >= s.probecap) or (not s.probing and newrate >= 2 * s.accepted)) then
    newrate, s.probing = nil, false
  elseif s.probing then
    newrate = newrate * factor
  elseif searching(s) and not reached then
    -- a rise nobody would use: held (RequestLimiter::CreepLocked)
  elseif searching(s) then
    if s.refusedat - newrate > searchstep * s.refusedat then
      newrate = math.min(newrate + (s.refusedat - newrate) / 2, growth * newrate)
    elseif now - s.cut >= (s.lone > 0 and
        math.min(settlems, math.max(lonems, 5 * sample * 2 ^ math.min(s.lone - 1, 8) * 60000 / newrate)) or settlems) then
      newrate = s.refusedat * (1 + searchstep)
    end
  else
    local target = math.min(s.refusedat, over * s.accepted)
    if newrate < near * target then
      newrate = newrate + (target - newrate) / 2
    else
      newrate = newrate + step * s.accepted
    end
  end
  s.creep, s.screep = now, 0
  if newrate and ceiling > 0 then newrate = math.min(newrate, ceiling) end
  if newrate ~= s.rate then set_rate(s, newrate) end
end
)lua";

// ARGV[18..]: budget_ms, tokens, tokens_per_minute (0: none). Takes the next
// place. Returns {admitted 0/1, wait_ms, rate * 1000 or -1, place, token slot
// ms, Redis now, ms to the next chance of a rise (-1: none)}.
constexpr std::string_view kAcquire = R"lua(
local budget, tokens, tpm = tonumber(ARGV[18]), tonumber(ARGV[19]), tonumber(ARGV[20])
local s = load()
creep(s)
local p = s.tail
local slot = slot_of(s, p)
if s.rate and slot <= now then s.apos, s.atime = p, now end
local tslot = math.max(now, s.tnext)
slot = math.max(slot, tslot)
local admitted = slot - now <= budget
if admitted then
  s.tail = s.tail + 1
  if tpm > 0 then s.tnext = tslot + tokens * 60000 / tpm end
  if slot <= now then went(s) else s.waited = s.waited + 1 end
end
save(s)
return {admitted and 1 or 0, math.ceil(slot - now), s.rate and math.floor(s.rate * 1000) or -1, p, math.floor(tslot), now,
  rise_in(s), now < s.grace and 1 or 0}
)lua";

// A waiter waking at its slot, or at the next chance of a rise: may place
// ARGV[18] start now? ARGV[18..]: place, token slot ms, budget_ms (from now).
// Returns {1 go | 0 too late | 2 wait, wait_ms, Redis now, ms to the next
// chance of a rise (-1: none)}.
constexpr std::string_view kCheck = R"lua(
local p, tslot, budget = tonumber(ARGV[18]), tonumber(ARGV[19]), tonumber(ARGV[20])
local s = load()
creep(s)
local slot = math.max(slot_of(s, p), tslot)
local rise = rise_in(s)
if slot <= now then went(s) end
save(s)
if slot <= now then return {1, 0, now, rise} end
if slot - now > budget then return {0, math.ceil(slot - now), now, rise} end
return {2, math.ceil(slot - now), now, rise}
)lua";

// A 429 of a request sent at ARGV[18] (Redis ms) with a Retry-After of
// ARGV[19] ms (0: none; the first 429 of a burst starts no probe up before it
// is over): counted against the
// current rate's sample, and a cut as limiter.h describes. Returns the rate
// * 1000, or -1 when it did not cut.
constexpr std::string_view kRefused = R"lua(
local s = load()
if tonumber(ARGV[18]) < s.changed then return -1 end
if tonumber(ARGV[18]) < s.grace then  -- just after a cut: the provider's window, not this rate's sample
  s.sent, s.screep = math.max(0, s.sent - 1), math.max(0, s.screep - 1)
  save(s)
  return -1
end
s.refused = s.refused + 1
if s.rate and s.sent < sample then
  if s.clean > 0 and s.rate > s.clean then
    -- a step up from a rate that ran clean, refused: back to that at once (a probe's doubling: halfway back)
    local back = s.probing and s.clean + (s.rate - s.clean) / 2 or s.clean
    s.refusedat, s.accepted, s.probing, s.lone = s.rate, math.max(s.accepted, s.clean), false, s.lone + 1
    set_rate(s, back)
    s.cut, s.creep, s.screep = now, now, 0
    save(s)
    return math.floor(s.rate * 1000)
  end
  save(s)
  return -1
end
local probe = s.rate == nil
cut(s, not probe)
if probe then s.hold = now + tonumber(ARGV[19]) end  -- a burst's first 429: no probe up before its delay
save(s)
return math.floor(s.rate * 1000)
)lua";

// A request sent at ARGV[18] (Redis ms) that the provider took, reported
// while a cut's grace was on: one sent since the cut ends it (RequestLimiter's Report).
constexpr std::string_view kTaken = R"lua(
local s = load()
if s.fresh or tonumber(ARGV[18]) < s.cut or s.grace == 0 then return 0 end
s.grace = 0
save(s)
return 1
)lua";
static_assert(kCutGrace == std::chrono::milliseconds(1000), "the Lua cut() above writes kCutGrace as 1000 ms");
static_assert(kReachedShare == 0.9, "the Lua creep() above writes kReachedShare as 0.9");

std::string Number(double value) { return std::to_string(value); }

}  // namespace

std::vector<std::string> SharedLimiter::Constants() const {
  return {Number(limit_.requests_per_minute.value_or(0)),
          Number(kMinPerMinute),
          Number(kBackoff),
          Number(kMaxCut),
          std::to_string(kMinSample),
          Number(kMaxSampledCut),
          Number(kProbeFactor),
          Number(kStepShare),
          Number(kNearRefused),
          Number(kTargetOver),
          Number(kSearchStep),
          Number(kProbeSeconds * 1000),
          std::to_string(std::chrono::milliseconds(kKeyTtl).count()),
          std::to_string(kSettleSeconds * 1000),
          Number(kStrayShare),
          std::to_string(kLoneSettleSeconds * 1000),
          Number(kSearchGrowth)};
}

RateLimit ShareOf(const RateLimit& limit, int replicas) {
  const double n = std::max(1, replicas);
  RateLimit share;
  if (limit.requests_per_minute) share.requests_per_minute = *limit.requests_per_minute / n;
  if (limit.tokens_per_minute) share.tokens_per_minute = *limit.tokens_per_minute / n;
  return share;
}

SharedLimiter::SharedLimiter(std::shared_ptr<SharedState> state, std::string provider, RateLimit limit, Clock& clock)
    : state_(std::move(state)),
      key_(state_->Key("limit", provider)),
      limit_(limit),
      clock_(clock),
      local_(ShareOf(limit, state_->replicas_hint()), clock) {}

boost::asio::awaitable<Limiter::Admission> SharedLimiter::Acquire(Clock::TimePoint latest, std::int64_t tokens) {
  static const std::string acquire = std::string(kPrelude) + std::string(kAcquire);
  static const std::string check = std::string(kPrelude) + std::string(kCheck);
  auto budget_ms = [&] {
    return std::to_string(std::max<std::int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(latest - clock_.Now()).count(), 0));
  };
  std::vector<std::string> keys{key_};  // (named: GCC 12 and braced lists in co_await)
  std::vector<std::string> args = Constants();
  args.insert(args.end(), {budget_ms(), std::to_string(tokens), Number(limit_.tokens_per_minute.value_or(0))});
  auto reply = co_await state_->Eval(acquire, std::move(keys), std::move(args));
  if (!reply || reply->elements.size() != 8) co_return co_await local_.Acquire(latest, tokens);
  in_grace_ = reply->elements[7].integer == 1;
  shared_rate_ = reply->elements[2].integer < 0 ? -1.0 : static_cast<double>(reply->elements[2].integer) / 1000;
  Admission admission;
  admission.wait = std::chrono::milliseconds(reply->elements[1].integer);
  if (reply->elements[0].integer == 0) {
    admission.outcome = Outcome::kTooLate;
    co_return admission;
  }
  const std::string place = std::to_string(reply->elements[3].integer);
  const std::string token_slot = std::to_string(reply->elements[4].integer);
  // When it was sent, on Redis's clock, which a later 429 report is compared with.
  std::int64_t sent_at = reply->elements[5].integer;
  // Until the slot, or the next chance of a rise (which may bring it sooner).
  auto nap = [](std::chrono::milliseconds wait, long long rise_ms) {
    return rise_ms < 0 ? wait : std::min(wait, std::chrono::milliseconds(rise_ms));
  };
  std::chrono::milliseconds sleep = nap(admission.wait, reply->elements[6].integer);
  while (admission.wait.count() > 0) {
    if (!co_await clock_.Sleep(sleep)) {
      admission.outcome = Outcome::kCancelled;
      co_return admission;
    }
    std::vector<std::string> check_keys{key_};
    std::vector<std::string> check_args = Constants();
    check_args.insert(check_args.end(), {place, token_slot, budget_ms()});
    auto checked = co_await state_->Eval(check, std::move(check_keys), std::move(check_args));
    if (!checked || checked->elements.size() != 4) break;  // Redis went away: the place was waited for
    sent_at = checked->elements[2].integer;
    admission.wait = std::chrono::milliseconds(checked->elements[0].integer == 1 ? 0 : checked->elements[1].integer);
    if (checked->elements[0].integer == 0) {
      admission.outcome = Outcome::kTooLate;
      co_return admission;
    }
    sleep = nap(admission.wait, checked->elements[3].integer);
  }
  admission = co_await OneIntervalAfterTheLast(latest);
  if (admission.outcome == Outcome::kGo) admission.ticket = Ticket{clock_.Now(), sent_at, tokens};
  co_return admission;
}

boost::asio::awaitable<Limiter::Admission> SharedLimiter::OneIntervalAfterTheLast(Clock::TimePoint latest) {
  Admission admission;
  for (;;) {
    Clock::TimePoint now = clock_.Now();
    Clock::TimePoint next = now;
    {
      std::lock_guard lock(mutex_);
      double rate = shared_rate_;
      if (rate > 0) {
        next = std::max(now, last_go_ + std::chrono::duration_cast<Clock::TimePoint::duration>(
                                            std::chrono::duration<double>(60.0 / rate)));
      }
      if (next <= now) {
        last_go_ = now;
        co_return admission;
      }
    }
    if (next > latest) {
      // Never wait out a deadline: the caller is told at once when to come back.
      admission.outcome = Outcome::kTooLate;
      admission.wait = std::chrono::ceil<std::chrono::milliseconds>(next - now);
      co_return admission;
    }
    if (!co_await clock_.SleepUntil(next)) {
      admission.outcome = Outcome::kCancelled;
      co_return admission;
    }
  }
}

void SharedLimiter::Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens,
                           std::chrono::milliseconds server_delay) {
  if (ticket.shared_admitted_ms < 0) {  // admitted by this process's share
    local_.Report(ticket, rate_limited, used_tokens, server_delay);
    return;
  }
  const bool correct = limit_.tokens_per_minute && used_tokens != ticket.tokens;
  const bool taken_in_grace = !rate_limited && in_grace_.exchange(false);  // after a cut: ends its grace
  if (!rate_limited && !correct && !taken_in_grace) return;
  std::vector<std::vector<std::string>> commands;
  if (correct) {
    double ms = 60'000.0 * static_cast<double>(used_tokens - ticket.tokens) / *limit_.tokens_per_minute;
    commands.push_back({"HINCRBYFLOAT", key_, "tnext", Number(ms)});
  }
  if (rate_limited || taken_in_grace) {
    static const std::string refused = std::string(kPrelude) + std::string(kRefused);
    static const std::string taken = std::string(kPrelude) + std::string(kTaken);
    std::vector<std::string> command{"EVAL", rate_limited ? refused : taken, "1", key_};
    std::vector<std::string> constants = Constants();
    command.insert(command.end(), constants.begin(), constants.end());
    command.push_back(std::to_string(ticket.shared_admitted_ms));
    if (rate_limited) command.push_back(std::to_string(server_delay.count()));
    commands.push_back(std::move(command));
  }
  // Reports are not awaited by the request that made them.
  boost::asio::co_spawn(
      state_->executor(),
      [](std::shared_ptr<SharedState> state,
         std::vector<std::vector<std::string>> commands) -> boost::asio::awaitable<void> {
        for (auto& command : commands) co_await state->Run(std::move(command));
      }(state_, std::move(commands)),
      boost::asio::detached);
}

std::optional<double> SharedLimiter::rate_per_minute() const {
  double rate = shared_rate_;
  if (!state_->healthy()) return local_.rate_per_minute();
  if (rate < 0) return std::nullopt;
  return rate;
}

}  // namespace skillrunner::state
