#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runner/error.h"
#include "runner/invocation.h"
#include "runner/skill.h"
#include "services/providers/provider.h"
#include "services/providers/retrying_provider.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::generation {

// Models that answered 400 naming response_format: they run the validation
// loop for the life of the process. Thread-safe.
class ModelDowngrades {
 public:
  bool IsDowngraded(const std::string& model) const;
  // True the first time for this model (the caller logs it once).
  bool Downgrade(const std::string& model);

 private:
  mutable std::mutex mutex_;
  std::set<std::string> models_;
};

// One structured generation: a prompt, a model and a schema the answer must
// match (DESIGN §5.1). Used by LLM_JSON_GENERATION skills and by judges.
struct GenerationSpec {
  std::string skill_id;
  std::string model;
  std::string mode = "none";  // native | json_object | none
  std::string schema_name;    // response_format name ([a-zA-Z0-9_-], <= 64)
  const boost::json::value* schema = nullptr;                    // the ORIGINAL schema
  const std::string* schema_text = nullptr;  // it as compact JSON, for the prompt (made at load)
  const validation::CompiledSchema* compiled_schema = nullptr;   // it, compiled
  const boost::json::value* strict_wire_schema = nullptr;        // native mode
  std::string system;  // rendered
  std::string user;    // rendered
  double temperature = 0.7;
  int max_output_tokens = 1024;
  RetryPolicy retry;
  bool retry_truncated = false;
  // Rules a schema cannot say (e.g. a judge must rate every criterion once);
  // their failures share the one validation retry.
  std::function<std::vector<FieldError>(const boost::json::value&)> extra_validator;
  std::vector<std::string> avoid;  // earlier mistakes in this session
  providers::SimulationHints simulation;
};

// The outcome codes: MAX_RETRIES_EXCEEDED (with the last attempt's errors),
// TRUNCATED, REFUSED, CONTENT_FILTERED, and whatever RetryingProvider
// reports. Every request is recorded in ctx as an attempt.
class StructuredGenerator {
 public:
  StructuredGenerator(providers::Provider& provider, providers::Sleeper& sleeper,
                      ModelDowngrades& downgrades, providers::RetryingProviderOptions options = {});

  boost::asio::awaitable<Result<boost::json::value>> Generate(const GenerationSpec& spec,
                                                              InvocationContext& ctx);

 private:
  providers::Provider& provider_;
  providers::Sleeper& sleeper_;
  ModelDowngrades& downgrades_;
  providers::RetryingProviderOptions options_;
};

// Attempt raw texts are kept up to this many bytes.
inline constexpr std::size_t kMaxRawBytes = 64 * 1024;
std::string CapRaw(std::string_view text);

// A response_format name ([a-zA-Z0-9_-], at most 64) made from any text.
std::string ResponseFormatName(std::string name);

// "validation_loop" for "none", "native_strict" for "native", else the mode.
std::string MetricsMode(const std::string& mode);

}  // namespace skillrunner::generation
