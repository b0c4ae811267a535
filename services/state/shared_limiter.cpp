#include "services/state/shared_limiter.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include <cmath>

namespace skillrunner::state {
namespace {

constexpr std::chrono::minutes kKeyTtl{10};  // a provider unused this long starts afresh

// Every script: Redis's clock, and the queue as RequestLimiter keeps it
// (place p starts at atime + (p - apos) / rate; a rate change re-anchors at
// the first place not yet reached).
constexpr std::string_view kPrelude = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function slot_of(p, rate, apos, atime)
  if not rate then return now end
  return math.max(now, atime + (p - apos) * 60000 / rate)
end
-- Re-anchors the queue for a new rate (RequestLimiter::SetRateLocked): a cut
-- (retime) re-times the places not yet reached; a rise paces only the places
-- to come. Returns apos, atime.
local function reanchor(rate, newrate, apos, atime, tail, retime)
  if not rate then return tail, now end
  local first = tail
  if retime then first = math.min(tail, math.max(apos, apos + math.floor((now - atime) * rate / 60000) + 1)) end
  local start = now
  if newrate and first > apos then
    start = math.max(now, atime + (first - 1 - apos) * 60000 / rate + 60000 / newrate)
  end
  -- never earlier than the first waiter was told (it sleeps until then)
  if newrate then start = math.max(start, atime + (first - apos) * 60000 / rate) end
  return first, start
end
)lua";

// KEYS: the provider's state hash. ARGV: budget_ms, ceiling (0: none),
// tokens, tokens_per_minute (0: none), probe factor, step, ttl_ms, near-refused share, target over.
// Returns {admitted 0/1, wait_ms, rate * 1000 or -1, place, token slot ms, Redis now}.
constexpr std::string_view kAcquire = R"lua(
local budget, ceiling, tokens, tpm = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local factor, step, ttl, near = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local over = tonumber(ARGV[9])
local s = redis.call('HMGET', KEYS[1], 'rate', 'tail', 'apos', 'atime', 'tnext', 'cut', 'creep', 'accepted', 'probing',
  'refusedat', 'probecap')
local fresh = not s[7]
local rate = tonumber(s[1])
local tail, apos, atime, tnext = tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or now, tonumber(s[5]) or 0
local cut, creep, accepted, probing = tonumber(s[6]) or now, tonumber(s[7]) or now, tonumber(s[8]) or 0, s[9] == '1'
local refusedat, probecap = tonumber(s[10]) or 0, tonumber(s[11]) or 0
local target = math.min(refusedat, over * accepted)
if fresh then
  if ceiling > 0 then rate = ceiling end
  redis.call('HSET', KEYS[1], 'changed', now)
end
local newrate = rate
if newrate and ceiling > 0 then newrate = math.min(newrate, ceiling) end
if newrate then
  local from = math.max(creep, cut)
  local quiet = math.floor((now - from) / 1000)
  if quiet >= 1 then
    for i = 1, math.min(quiet, 600) do
      if not newrate then break end
      if ceiling == 0 and ((probing and newrate >= probecap) or (not probing and newrate >= 2 * accepted)) then
        newrate, probing = nil, false
      elseif probing then
        newrate = math.min(newrate * factor, probecap)
      elseif newrate < near * target then
        newrate = newrate + (target - newrate) / 2
      else
        newrate = newrate + step * accepted
      end
    end
    creep = from + quiet * 1000
    if newrate and ceiling > 0 then newrate = math.min(newrate, ceiling) end
  end
end
if newrate ~= rate then
  apos, atime = reanchor(rate, newrate, apos, atime, tail, false)
  rate = newrate
  redis.call('HSET', KEYS[1], 'changed', now, 'sent', 0, 'refused', 0)
end
local p = tail
local slot = slot_of(p, rate, apos, atime)
if rate and slot <= now then apos, atime = p, now end
local tslot = math.max(now, tnext)
slot = math.max(slot, tslot)
local shown = rate and math.floor(rate * 1000) or -1
local admitted = slot - now <= budget
if admitted then
  tail = tail + 1
  if tpm > 0 then tnext = tslot + tokens * 60000 / tpm end
  if slot <= now then redis.call('HINCRBY', KEYS[1], 'sent', 1) end
end
redis.call('HSET', KEYS[1], 'rate', rate and string.format('%.6f', rate) or '', 'tail', tail, 'apos', apos,
  'atime', string.format('%.3f', atime), 'tnext', string.format('%.3f', tnext), 'cut', cut, 'creep', creep,
  'accepted', string.format('%.6f', accepted), 'probing', probing and '1' or '0')
redis.call('PEXPIRE', KEYS[1], ttl)
return {admitted and 1 or 0, math.ceil(slot - now), shown, p, math.floor(tslot), now}
)lua";

// A waiter waking at its slot: may place ARGV[1] start now (the rate may
// have been cut meanwhile)? ARGV: place, token slot ms, budget_ms (from now).
// Returns {1 go | 0 too late | 2 wait, wait_ms, Redis now}.
constexpr std::string_view kCheck = R"lua(
local p, tslot, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'rate', 'apos', 'atime')
local slot = math.max(slot_of(p, tonumber(s[1]), tonumber(s[2]) or 0, tonumber(s[3]) or now), tslot)
if slot <= now then
  redis.call('HINCRBY', KEYS[1], 'sent', 1)
  return {1, 0, now}
end
if slot - now > budget then return {0, math.ceil(slot - now), now} end
return {2, math.ceil(slot - now), now}
)lua";

// A 429 of a request sent at ARGV[1] (Redis ms): counted against the
// current rate's sample, and a cut as limiter.h describes. ARGV: sent at,
// minimum, backoff, ceiling (0: none), ttl_ms, max cut, min sample, max sampled cut. Returns
// the rate * 1000, or -1 when it did not cut.
constexpr std::string_view kRefused = R"lua(
local admitted, minimum, backoff, ceiling = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl, maxcut, sample, samplecut = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local s = redis.call('HMGET', KEYS[1], 'rate', 'changed', 'sent', 'refused', 'tail', 'apos', 'atime', 'accepted')
local changed = tonumber(s[2]) or 0
if admitted < changed then return -1 end
local refused = (tonumber(s[4]) or 0) + 1
local sent = tonumber(s[3]) or 0
local rate = tonumber(s[1])
local sampled = rate and sent >= sample
if rate and not sampled then
  redis.call('HSET', KEYS[1], 'refused', refused)
  return -1
end
local before = rate or math.max(60 * sent / math.max(1, (now - changed) / 1000), 2 * (tonumber(s[8]) or 0))
local estimate, nextrate = before / 2, before / 2
if sampled then
  local share = refused / sent
  estimate = rate * (1 - share)
  nextrate = share > 1 - backoff and backoff * estimate or estimate
  if share < 0.5 then
    nextrate = math.max(nextrate, samplecut * before)
    estimate = math.max(estimate, nextrate)
  end
end
local floor = before / maxcut
local newrate = math.max(minimum, nextrate, floor)
if ceiling > 0 then newrate = math.min(newrate, ceiling) end
local apos, atime = reanchor(rate, newrate, tonumber(s[6]) or 0, tonumber(s[7]) or now, tonumber(s[5]) or 0, true)
redis.call('HSET', KEYS[1], 'rate', string.format('%.6f', newrate), 'cut', now, 'creep', now, 'changed', now,
  'accepted', string.format('%.6f', math.max(minimum, estimate)), 'probing', (not sampled or nextrate < floor) and '1' or '0',
  'refusedat', sampled and string.format('%.6f', before) or '0',
  'probecap', (not sampled or nextrate < floor) and 2 * before or (tonumber(redis.call('HGET', KEYS[1], 'probecap')) or 0),
  'sent', 0, 'refused', 0, 'apos', apos, 'atime', string.format('%.3f', atime))
redis.call('PEXPIRE', KEYS[1], ttl)
return math.floor(newrate * 1000)
)lua";

std::string Number(double value) { return std::to_string(value); }

}  // namespace

RateLimit ShareOf(const RateLimit& limit, int replicas) {
  const double n = std::max(1, replicas);
  RateLimit share;
  if (limit.requests_per_minute) share.requests_per_minute = *limit.requests_per_minute / n;
  if (limit.tokens_per_minute) share.tokens_per_minute = *limit.tokens_per_minute / n;
  return share;
}

SharedLimiter::SharedLimiter(std::shared_ptr<SharedState> state, std::string provider, RateLimit limit, Clock& clock)
    : state_(std::move(state)), key_(state_->Key("limit", provider)),
      limit_(limit), clock_(clock), local_(ShareOf(limit, state_->replicas_hint()), clock) {}

boost::asio::awaitable<Limiter::Admission> SharedLimiter::Acquire(Clock::TimePoint latest, std::int64_t tokens) {
  static const std::string acquire = std::string(kPrelude) + std::string(kAcquire);
  static const std::string check = std::string(kPrelude) + std::string(kCheck);
  auto budget_ms = [&] {
    return std::to_string(std::max<std::int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(latest - clock_.Now()).count(), 0));
  };
  std::vector<std::string> keys{key_};  // (named: GCC 12 and braced lists in co_await)
  std::vector<std::string> args{budget_ms(), Number(limit_.requests_per_minute.value_or(0)), std::to_string(tokens),
                                Number(limit_.tokens_per_minute.value_or(0)), Number(kProbeFactor),
                                Number(kStepShare), std::to_string(std::chrono::milliseconds(kKeyTtl).count()),
                                Number(kNearRefused), Number(kTargetOver)};
  auto reply = co_await state_->Eval(acquire, std::move(keys), std::move(args));
  if (!reply || reply->elements.size() != 6) co_return co_await local_.Acquire(latest, tokens);
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
  while (admission.wait.count() > 0) {
    if (!co_await clock_.Sleep(admission.wait)) {
      admission.outcome = Outcome::kCancelled;
      co_return admission;
    }
    std::vector<std::string> check_keys{key_};
    std::vector<std::string> check_args{place, token_slot, budget_ms()};
    auto checked = co_await state_->Eval(check, std::move(check_keys), std::move(check_args));
    if (!checked || checked->elements.size() != 3) break;  // Redis went away: the place was waited for
    sent_at = checked->elements[2].integer;
    admission.wait = std::chrono::milliseconds(checked->elements[0].integer == 1 ? 0 : checked->elements[1].integer);
    if (checked->elements[0].integer == 0) {
      admission.outcome = Outcome::kTooLate;
      co_return admission;
    }
  }
  admission.wait = std::chrono::milliseconds(0);
  // Waiters this process woke late still go one interval apart.
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
        break;
      }
    }
    if (!co_await clock_.Sleep(std::chrono::ceil<std::chrono::milliseconds>(next - now))) {
      admission.outcome = Outcome::kCancelled;
      co_return admission;
    }
  }
  admission.ticket = Ticket{clock_.Now(), sent_at, tokens};
  co_return admission;
}

void SharedLimiter::Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens) {
  if (ticket.shared_admitted_ms < 0) {  // admitted by this process's share
    local_.Report(ticket, rate_limited, used_tokens);
    return;
  }
  const bool correct = limit_.tokens_per_minute && used_tokens != ticket.tokens;
  if (!rate_limited && !correct) return;
  std::vector<std::vector<std::string>> commands;
  if (correct) {
    double ms = 60'000.0 * static_cast<double>(used_tokens - ticket.tokens) / *limit_.tokens_per_minute;
    commands.push_back({"HINCRBYFLOAT", key_, "tnext", Number(ms)});
  }
  if (rate_limited) {
    static const std::string script = std::string(kPrelude) + std::string(kRefused);
    commands.push_back({"EVAL", script, "1", key_, std::to_string(ticket.shared_admitted_ms), Number(kMinPerMinute),
                        Number(kBackoff), Number(limit_.requests_per_minute.value_or(0)),
                        std::to_string(std::chrono::milliseconds(kKeyTtl).count()), Number(kMaxCut),
                        std::to_string(kMinSample), Number(kMaxSampledCut)});
  }
  // Reports are not awaited by the request that made them.
  boost::asio::co_spawn(
      state_->executor(),
      [](std::shared_ptr<SharedState> state, std::vector<std::vector<std::string>> commands) -> boost::asio::awaitable<void> {
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
