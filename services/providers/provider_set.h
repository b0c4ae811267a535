#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/env.h"
#include "services/providers/provider.h"
#include "services/common/clock.h"
#include "services/providers/provider_settings.h"
#include "services/providers/simulated_provider.h"

namespace skillrunner::providers {

// One Provider per entry of the config's `providers:` (each HTTP provider with
// its own HttpClient and connection pools). Built once per process; keys are
// looked up per request, never here, so building needs none.
class ProviderSet {
 public:
  // Fails naming the provider and the setting that is wrong.
  // Every HTTP provider is behind a RequestLimiter (DESIGN 9.6) on `clock`,
  // which must outlive the set; `ceilings` gives the configured rate of a
  // provider (requests a minute), else its pace is learned from its 429s.
  static std::expected<std::unique_ptr<ProviderSet>, std::string> Create(
      const ProviderSettingsMap& providers, boost::asio::any_io_executor executor, EnvLookup env,
      Clock& clock = RealClock(), const std::map<std::string, double, std::less<>>& ceilings = {});

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
