#include "services/state/shared_limiter.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include <cmath>

namespace skillrunner::state {
namespace {

constexpr std::chrono::minutes kKeyTtl{10};  // a provider unused this long starts afresh

// Shared by both scripts: the requests a minute admitted over the window,
// from per-second counts in KEYS[2] (stale seconds are dropped here).
constexpr std::string_view kObserved = R"lua(
local function observed_rate(now, window)
  local all = redis.call('HGETALL', KEYS[2])
  local nowsec = math.floor(now / 1000)
  local count, oldest = 0, nil
  for i = 1, #all, 2 do
    local sec = tonumber(all[i])
    if nowsec - sec < window then
      count = count + tonumber(all[i + 1])
      if not oldest or sec < oldest then oldest = sec end
    elseif sec < nowsec then
      redis.call('HDEL', KEYS[2], all[i])
    end
  end
  if count == 0 then return 0 end
  return count * 60 / math.max(1, (now - oldest * 1000) / 1000)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
)lua";

// KEYS: state hash, per-second counts. ARGV: budget_ms, ceiling (0: none),
// tokens, tokens_per_minute (0: none), window_s, minimum, step, ttl_ms.
// Returns {admitted 0/1, wait_ms, rate * 1000 or -1, the slot in Redis ms}.
constexpr std::string_view kAcquire = R"lua(
local budget, ceiling, tokens, tpm = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local window, minimum, step, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local s = redis.call('HMGET', KEYS[1], 'rate', 'next', 'tnext', 'cut', 'creep', 'observed')
local rate = tonumber(s[1])
local nxt, tnext, cut = tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0
local creep, observed = tonumber(s[5]) or now, tonumber(s[6]) or 0
if not s[5] and ceiling > 0 then rate = ceiling end
if rate and ceiling > 0 then rate = math.min(rate, ceiling) end
if rate then
  local quiet = math.floor((now - math.max(creep, cut)) / 1000)
  if quiet >= 1 then
    local base = ceiling > 0 and ceiling or math.max(observed, minimum)
    rate = rate + step * base * quiet
    creep = now
    if ceiling > 0 then rate = math.min(rate, ceiling) elseif rate >= 2 * observed then rate = nil end
  end
end
local slot = math.max(now, nxt, tnext)
local shown = rate and math.floor(rate * 1000) or -1
if slot - now > budget then return {0, math.ceil(slot - now), shown, 0} end
if rate then nxt = slot + 60000 / rate end
if tpm > 0 then tnext = math.max(tnext, now) + tokens * 60000 / tpm end
redis.call('HINCRBY', KEYS[2], math.floor(slot / 1000), 1)
redis.call('HSET', KEYS[1], 'rate', rate and string.format('%.6f', rate) or '', 'next', string.format('%.3f', nxt),
  'tnext', string.format('%.3f', tnext), 'cut', cut, 'creep', creep, 'observed', string.format('%.6f', observed))
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return {1, math.ceil(slot - now), shown, math.floor(slot)}
)lua";

// A 429 of a request admitted at ARGV[1] (Redis ms): halve the observed rate,
// unless it was admitted before the last cut. ARGV: admitted, window_s,
// minimum, ttl_ms. Returns the rate * 1000, or -1 when nothing changed.
constexpr std::string_view kRefused = R"lua(
local admitted, window, minimum, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'rate', 'next', 'cut')
if admitted < (tonumber(s[3]) or 0) then return -1 end
local observed = observed_rate(now, window)
local current = tonumber(s[1]) or observed
local rate = math.max(minimum, math.min(current, observed) / 2)
redis.call('HSET', KEYS[1], 'rate', string.format('%.6f', rate), 'cut', now, 'creep', now,
  'observed', string.format('%.6f', math.max(observed, minimum)),
  'next', string.format('%.3f', math.max(tonumber(s[2]) or 0, now)))
redis.call('PEXPIRE', KEYS[1], ttl)
return math.floor(rate * 1000)
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
    : state_(std::move(state)), key_(state_->Key("limit", provider)), counts_key_(key_ + ":counts"),
      limit_(limit), clock_(clock), local_(ShareOf(limit, state_->replicas_hint()), clock) {}

boost::asio::awaitable<Limiter::Admission> SharedLimiter::Acquire(Clock::TimePoint latest, std::int64_t tokens) {
  const Clock::TimePoint now = clock_.Now();
  const std::int64_t budget = std::chrono::duration_cast<std::chrono::milliseconds>(latest - now).count();
  static const std::string script = std::string(kObserved) + std::string(kAcquire);
  std::vector<std::string> keys{key_, counts_key_};  // (named: GCC 12 and braced lists in co_await)
  std::vector<std::string> args{std::to_string(std::max<std::int64_t>(budget, 0)),
                                Number(limit_.requests_per_minute.value_or(0)), std::to_string(tokens),
                                Number(limit_.tokens_per_minute.value_or(0)), std::to_string(kObservedWindow.count()),
                                Number(kMinPerMinute), Number(kStepShare),
                                std::to_string(std::chrono::milliseconds(kKeyTtl).count())};
  auto reply = co_await state_->Eval(script, std::move(keys), std::move(args));
  if (!reply || reply->elements.size() != 4) co_return co_await local_.Acquire(latest, tokens);
  shared_rate_ = reply->elements[2].integer < 0 ? -1.0 : static_cast<double>(reply->elements[2].integer) / 1000;
  Admission admission;
  admission.wait = std::chrono::milliseconds(reply->elements[1].integer);
  if (reply->elements[0].integer == 0) {
    admission.outcome = Outcome::kTooLate;
    co_return admission;
  }
  // The slot on Redis's clock, which a later 429 report is compared with.
  admission.ticket = Ticket{now + admission.wait, reply->elements[3].integer, tokens};
  if (admission.wait.count() > 0 && !co_await clock_.Sleep(admission.wait)) admission.outcome = Outcome::kCancelled;
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
    static const std::string script = std::string(kObserved) + std::string(kRefused);
    commands.push_back({"EVAL", script, "2", key_, counts_key_, std::to_string(ticket.shared_admitted_ms),
                        std::to_string(kObservedWindow.count()), Number(kMinPerMinute),
                        std::to_string(std::chrono::milliseconds(kKeyTtl).count())});
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
