#pragma once

// Quotas of TCP tenants (design.md §9.6 `tenants:`): invocations a minute and
// at once per tenant. Without shared state they hold in this process; with
// it, across every process with the same `state.redis` (a Lua script per
// admission; in-flight leases expire, so a replica that dies does not hold
// its tenants' slots for ever). While degraded: this process's share.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "services/common/clock.h"

namespace skillrunner::state {

class SharedState;

struct Quota {
  std::optional<double> requests_per_minute;  // a burst of one second's worth (at least 1) is allowed
  std::optional<int> max_in_flight;

  friend bool operator==(const Quota&, const Quota&) = default;
};

class TenantQuotas {
 public:
  // `shared` may be null. `clock` must outlive this.
  TenantQuotas(std::map<std::string, Quota, std::less<>> quotas, std::shared_ptr<SharedState> shared, Clock& clock);
  ~TenantQuotas();

  struct Decision {
    bool admitted = true;
    std::chrono::milliseconds retry_after{0};  // when refused: when to try again
    std::string reason;                        // when refused: what was over its quota
    std::string lease;                         // when admitted: give it back to Release
    bool shared = false;
  };
  // Admits one invocation of `tenant` (unknown tenants: no quota) that holds
  // its in-flight slot at most `lease_for`.
  boost::asio::awaitable<Decision> Admit(const std::string& tenant, std::chrono::milliseconds lease_for);
  void Release(const std::string& tenant, const Decision& decision);

  struct Usage {
    std::uint64_t requests = 0;    // admitted by this process
    std::uint64_t overloaded = 0;  // refused by this process
    std::int64_t in_flight = 0;    // running in this process
  };
  std::map<std::string, Usage> usage() const;

 private:
  struct Tenant {
    Quota quota;  // the whole quota
    Quota share;  // this process's share, while degraded
    Usage usage;
    Clock::TimePoint tat{};  // local rate: the theoretical arrival time
    std::int64_t local_in_flight = 0;
  };
  Decision AdmitLocally(Tenant& tenant);

  std::map<std::string, Tenant, std::less<>> tenants_;
  std::shared_ptr<SharedState> shared_;
  Clock& clock_;
  mutable std::mutex mutex_;
  std::uint64_t next_lease_ = 0;
  std::string lease_prefix_;
};

}  // namespace skillrunner::state
