#include "services/state/tenant_quota.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <cmath>
#include <random>

#include "services/state/shared_state.h"

namespace skillrunner::state {
namespace {

constexpr std::chrono::milliseconds kInFlightRetryAfter{200};
constexpr std::chrono::minutes kKeyTtl{10};

// KEYS: rate hash, in-flight leases (a sorted set scored by expiry).
// ARGV: requests_per_minute (0: none), max_in_flight (0: none), lease id,
// lease_ms, ttl_ms, in-flight retry_after_ms. Returns {admitted, retry_after_ms, reason}.
constexpr std::string_view kAdmit = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm, limit, lease, lease_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local ttl, busy = tonumber(ARGV[5]), tonumber(ARGV[6])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= limit then return {0, busy, 'max_in_flight'} end
end
if rpm > 0 then
  local interval = 60000 / rpm
  local burst = math.max(1, rpm / 60) * interval
  local tat = math.max(tonumber(redis.call('HGET', KEYS[1], 'tat')) or now, now) + interval
  if tat - now > burst then return {0, math.ceil(tat - now - burst), 'requests_per_minute'} end
  redis.call('HSET', KEYS[1], 'tat', string.format('%.3f', tat))
  redis.call('PEXPIRE', KEYS[1], ttl)
end
if limit > 0 then
  redis.call('ZADD', KEYS[2], now + lease_ms, lease)
  redis.call('PEXPIRE', KEYS[2], math.max(ttl, lease_ms))
end
return {1, 0, ''}
)lua";

Quota ShareOfQuota(const Quota& quota, int replicas) {
  const int n = std::max(1, replicas);
  Quota share;
  if (quota.requests_per_minute) share.requests_per_minute = *quota.requests_per_minute / n;
  if (quota.max_in_flight) share.max_in_flight = std::max(1, *quota.max_in_flight / n);
  return share;
}

}  // namespace

TenantQuotas::TenantQuotas(std::map<std::string, Quota, std::less<>> quotas, std::shared_ptr<SharedState> shared,
                           Clock& clock)
    : shared_(std::move(shared)), clock_(clock) {
  for (auto& [name, quota] : quotas) {
    Tenant& tenant = tenants_[name];
    tenant.quota = quota;
    tenant.share = shared_ ? ShareOfQuota(quota, shared_->replicas_hint()) : quota;
  }
  std::random_device random;
  lease_prefix_ = std::to_string(random()) + "-" + std::to_string(random()) + "-";
}

TenantQuotas::~TenantQuotas() = default;

TenantQuotas::Decision TenantQuotas::AdmitLocally(Tenant& tenant) {
  Decision decision;
  const Quota& quota = tenant.share;
  if (quota.max_in_flight && tenant.local_in_flight >= *quota.max_in_flight) {
    return Decision{false, kInFlightRetryAfter, "max_in_flight", "", false};
  }
  if (quota.requests_per_minute) {
    const Clock::TimePoint now = clock_.Now();
    const auto interval = std::chrono::duration_cast<Clock::TimePoint::duration>(
        std::chrono::duration<double>(60.0 / *quota.requests_per_minute));
    const auto burst = std::chrono::duration_cast<Clock::TimePoint::duration>(
        interval * std::max(1.0, *quota.requests_per_minute / 60));
    Clock::TimePoint tat = std::max(tenant.tat, now) + interval;
    if (tat - now > burst) {
      return Decision{false, std::chrono::ceil<std::chrono::milliseconds>(tat - now - burst), "requests_per_minute", "",
                      false};
    }
    tenant.tat = tat;
  }
  return decision;
}

boost::asio::awaitable<TenantQuotas::Decision> TenantQuotas::Admit(const std::string& name,
                                                                   std::chrono::milliseconds lease_for) {
  Tenant* tenant = nullptr;
  std::string lease;
  {
    std::lock_guard lock(mutex_);
    auto it = tenants_.find(name);
    if (it == tenants_.end()) co_return Decision{};
    tenant = &it->second;
    lease = lease_prefix_ + std::to_string(next_lease_++);
  }
  std::optional<RedisReply> reply;
  if (shared_) {
    const Quota& quota = tenant->quota;
    std::vector<std::string> keys{shared_->Key("tenant", name), shared_->Key("tenant", name) + ":in_flight"};
    std::vector<std::string> args{std::to_string(quota.requests_per_minute.value_or(0)),
                                  std::to_string(quota.max_in_flight.value_or(0)),
                                  lease,
                                  std::to_string(lease_for.count()),
                                  std::to_string(std::chrono::milliseconds(kKeyTtl).count()),
                                  std::to_string(kInFlightRetryAfter.count())};
    reply = co_await shared_->Eval(kAdmit, std::move(keys), std::move(args));
  }
  std::lock_guard lock(mutex_);
  Decision decision;
  if (reply && reply->elements.size() == 3) {
    decision.admitted = reply->elements[0].integer == 1;
    decision.retry_after = std::chrono::milliseconds(reply->elements[1].integer);
    decision.reason = reply->elements[2].text;
    decision.shared = true;
  } else {
    decision = AdmitLocally(*tenant);
  }
  if (decision.admitted) {
    decision.lease = lease;
    ++tenant->usage.requests;
    ++tenant->usage.in_flight;
    if (!decision.shared) ++tenant->local_in_flight;
  } else {
    ++tenant->usage.overloaded;
  }
  co_return decision;
}

void TenantQuotas::Release(const std::string& name, const Decision& decision) {
  if (!decision.admitted || decision.lease.empty()) return;
  {
    std::lock_guard lock(mutex_);
    auto it = tenants_.find(name);
    if (it == tenants_.end()) return;
    --it->second.usage.in_flight;
    if (!decision.shared) --it->second.local_in_flight;
    if (!decision.shared || !it->second.quota.max_in_flight) return;
  }
  boost::asio::co_spawn(
      shared_->executor(),
      [](std::shared_ptr<SharedState> state, std::string key, std::string lease) -> boost::asio::awaitable<void> {
        std::vector<std::string> command{"ZREM", std::move(key), std::move(lease)};
        co_await state->Run(std::move(command));
      }(shared_, shared_->Key("tenant", name) + ":in_flight", decision.lease),
      boost::asio::detached);
}

std::map<std::string, TenantQuotas::Usage> TenantQuotas::usage() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, Usage> out;
  for (const auto& [name, tenant] : tenants_) out[name] = tenant.usage;
  return out;
}

}  // namespace skillrunner::state
