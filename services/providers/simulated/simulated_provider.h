#pragma once

// The embedded `simulated` provider (design.md §6.2): no network, no key.
//
// - Deterministic: the answer depends only on the request's task id and
//   messages, its seed (the caller's, else the skill's `simulation.seed`, plus
//   the judge sample) and the provider's seed (FNV-1a + splitmix64, the same
//   bytes on every platform).
// - Schema-driven: it answers with an instance of the schema the caller
//   validates against (request.metadata.answer_schema, else the response
//   format's schema, else `{}`) as compact JSON; judges get one result per
//   criterion (schema_instance.h).
// - Scriptable faults per attempt (fault_script.h, FaultScriptDocumentation()):
//   the provider owns the scripts (its config's `faults`, and each skill's
//   `simulation:` block handed to it by SetSkillSimulations) and picks the
//   entries for a request from its metadata (skill, task, attempt number).
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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/common/error.h"
#include "services/providers/provider.h"
#include "services/providers/simulated/fault_script.h"

namespace skillrunner::providers {

struct SimulatedProviderOptions {
  std::chrono::milliseconds latency{0};  // wait before each answer (benchmarks, load tests)
  boost::json::value faults;             // config-level fault script (array) or null
  std::uint64_t seed = 0;                // mixed into every request's seed
};

// A skill's `simulation:` block ({faults?, seed?}), checked.
struct SkillSimulation {
  std::vector<Fault> faults;
  std::optional<std::uint64_t> seed;
};

// Checks a `simulation:` block; errors name the place by JSON pointer
// relative to the block ("/faults/0/fault: unknown fault ...").
Result<SkillSimulation> ParseSkillSimulation(const boost::json::value& block);

class SimulatedProvider final : public Provider {
 public:
  // Throws std::invalid_argument when `options.faults` is not a valid config
  // fault script (MakeSimulatedProvider reports that as an error instead).
  explicit SimulatedProvider(SimulatedProviderOptions options);

  // Waits `latency` on the calling coroutine's executor (cancellation ends
  // the wait with ProviderError::Kind::kCancelled), then answers.
  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  // The answer without the wait.
  std::expected<ChatResponse, ProviderError> Answer(const ChatRequest& request) const;

  // The skills' `simulation:` blocks, by skill id, and by "<id>@<version>"
  // for each version of a skill with a rollout (its candidate's block is its
  // own). Call before the first Chat (the composition root does, for every
  // skill of its registry).
  void SetSkillSimulations(std::map<std::string, SkillSimulation, std::less<>> skills);

 private:
  // A request of a known version takes "<id>@<version>" when there is one.
  const SkillSimulation* SimulationFor(std::string_view skill_id, int skill_version) const;

  SimulatedProviderOptions options_;
  std::vector<Fault> config_faults_;
  std::map<std::string, SkillSimulation, std::less<>> skills_;
};

// Options from a `kind: simulated` provider's config settings: optional
// `latency_ms` (integer >= 0), `faults` (a config fault script), `seed`
// (integer >= 0); other keys are ignored. Errors name the setting.
Result<SimulatedProviderOptions> SimulatedProviderOptionsFromSettings(const boost::json::object& settings);

Result<std::shared_ptr<SimulatedProvider>> MakeSimulatedProvider(const boost::json::object& settings);

// The 64-bit seed of a request: FNV-1a over the task id, the role and
// content of its first `messages` messages (all by default), `request_seed`
// and `provider_seed`.
std::uint64_t SimulationSeed(const ChatRequest& request, std::uint64_t request_seed, std::uint64_t provider_seed,
                             std::size_t messages = SIZE_MAX);

}  // namespace skillrunner::providers
