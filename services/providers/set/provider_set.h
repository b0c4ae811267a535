#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/clock.h"
#include "services/common/env.h"
#include "services/common/error.h"
#include "services/providers/provider.h"
#include "services/providers/provider_settings.h"
#include "services/providers/simulated/simulated_provider.h"
#include "services/state/limiter.h"

namespace skillrunner::providers {

// One Provider per entry of the config's `providers:` (each HTTP provider with
// its own HttpClient and connection pools). Built once per process; keys are
// looked up per request, never here, so building needs none.
// The configured limits of the entries sharing one account: for each of
// requests and tokens, the smallest any of them configured (each is a
// ceiling on the account's one pace); unset where none configured it.
state::RateLimit AccountLimit(const std::map<std::string, state::RateLimit, std::less<>>& limits,
                              const std::vector<std::string>& entries);

class BatchApi;

// The batch API of a configured provider (design.md §10.6) with its own HTTP
// client on `executor`; null for kinds without one (simulated).
std::shared_ptr<BatchApi> MakeBatchApi(const std::string& name, const ProviderSettings& provider,
                                       boost::asio::any_io_executor executor, EnvLookup env);

class ProviderSet {
 public:
  // Fails (CONFIG_INVALID) naming the provider and the setting that is wrong.
  // Every HTTP provider is behind the limiter `limiters` makes (design.md §9.6);
  // by default a RequestLimiter with nothing configured, whose pace is
  // learned from 429s. Entries on one account (the same kind, base_url and
  // api_key_env) share one limiter: `limiters` is called once per account
  // with its entries' names, sorted. `clock` must outlive the set.
  using LimiterFactory = std::function<std::shared_ptr<state::Limiter>(const std::vector<std::string>& entries)>;
  static Result<std::unique_ptr<ProviderSet>> Create(const ProviderSettingsMap& providers,
                                                     boost::asio::any_io_executor executor, EnvLookup env,
                                                     Clock& clock = RealClock(), LimiterFactory limiters = {});

  // nullptr for a name the config does not define.
  Provider* Find(std::string_view name) const;

  // Hands every skill's `simulation:` block to each simulated provider (they
  // own the fault scripts). Call before the first request.
  void SetSkillSimulations(const std::map<std::string, SkillSimulation, std::less<>>& skills);

 private:
  std::map<std::string, std::shared_ptr<Provider>, std::less<>> providers_;
  std::vector<std::shared_ptr<SimulatedProvider>> simulated_;
};

}  // namespace skillrunner::providers
