#pragma once

// The embedded `simulated` provider (DESIGN §6.2): no network, no key.
//
// - Deterministic: the answer depends only on the skill id, the request's
//   messages, the request's seed and the provider's seed (FNV-1a + splitmix64,
//   the same bytes on every platform).
// - Schema-driven: it answers with an instance of the skill's original output
//   schema (request.simulation.output_schema, else the response format's
//   schema, else `{}`) as compact JSON; judges get one result per criterion
//   (schema_instance.h).
// - Scriptable faults per attempt (fault_script.h, FaultScriptDocumentation()).
// - Repair on retry: given the previous answer and a user turn listing its
//   errors ("- /path: message"), it regenerates only those values
//   (feedback_repair.h).
// - Usage is estimated (code points / 4) and marked so.
//
// Thread-safe: Chat may be called concurrently from any executor.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "services/providers/fault_script.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

struct SimulatedProviderOptions {
  std::chrono::milliseconds latency{0};  // wait before each answer (benchmarks, load tests)
  boost::json::value faults;             // config-level fault script (array) or null
  std::uint64_t seed = 0;                // mixed into every request's seed
};

class SimulatedProvider final : public Provider {
 public:
  // Throws std::invalid_argument when `options.faults` is not a valid config
  // fault script (MakeSimulatedProvider reports that as an error instead).
  explicit SimulatedProvider(SimulatedProviderOptions options);

  // Waits `latency` on the calling coroutine's executor (cancellation ends
  // the wait with ProviderError::Kind::kCancelled), then answers.
  boost::asio::awaitable<std::expected<ChatResponse, ProviderError>> Chat(
      const ChatRequest& request) override;

  // The answer without the wait.
  std::expected<ChatResponse, ProviderError> Answer(const ChatRequest& request) const;

 private:
  SimulatedProviderOptions options_;
  std::vector<Fault> config_faults_;
};

// Options from a `kind: simulated` provider's config settings: optional
// `latency_ms` (integer >= 0), `faults` (a config fault script), `seed`
// (integer >= 0); other keys are ignored. Errors name the setting.
std::expected<SimulatedProviderOptions, std::string> SimulatedProviderOptionsFromSettings(
    const boost::json::object& settings);

std::expected<std::shared_ptr<SimulatedProvider>, std::string> MakeSimulatedProvider(
    const boost::json::object& settings);

// The 64-bit seed of a request: FNV-1a over the skill id, every message's
// role and content, the request's seed and `provider_seed`.
std::uint64_t SimulationSeed(const ChatRequest& request, std::uint64_t provider_seed);

}  // namespace skillrunner::providers
