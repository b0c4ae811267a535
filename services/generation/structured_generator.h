#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/generation/generation_spec.h"
#include "services/providers/provider.h"
#include "services/providers/retrying_provider.h"

namespace skillrunner::generation {

// Finds the Provider a generation runs on by provider name (nullptr: unknown).
using ProviderLookup = std::function<providers::Provider*(std::string_view)>;

// Models that answered 400 naming response_format: they run the validation
// loop for the life of the process. Thread-safe.
class ModelDowngrades {
 public:
  bool IsDowngraded(const std::string& model) const;
  // True the first time for this model (the caller logs it once).
  bool Downgrade(const std::string& model);
  // design.md §11.5: an answer in native or tool mode outside the schema the provider was sent (its
  // strict mode did not hold). The kViolationsToDowngrade-th within kViolationWindow downgrades the
  // model: true when this one did.
  bool NoteViolation(const std::string& model, Clock::TimePoint now);

  static constexpr int kViolationsToDowngrade = 3;
  static constexpr std::chrono::minutes kViolationWindow{10};

 private:
  mutable std::mutex mutex_;
  std::set<std::string> models_;
  std::map<std::string, std::deque<Clock::TimePoint>, std::less<>> violations_;
};

// One structured generation (design.md §5.1): ask, then check the answer
// (refusal, content filter, truncation, JSON extraction, strict map-back,
// schema and extra validation, then the skill's rules), and on a parse,
// validation or rule failure ask again with every error, up to
// spec.retry.validation_retries times. A model whose transient budget is
// spent moves to the next of spec.fallbacks; MAX_RETRIES_EXCEEDED with
// spec.escalation set gets one more generation there (design.md §9.3). The
// outcome codes: MAX_RETRIES_EXCEEDED
// (with the last attempt's errors), TRUNCATED, REFUSED, CONTENT_FILTERED,
// HANDLER_FAILED (an exec rule that failed; its attempt is kind handler), and
// whatever RetryingProvider reports. Every failed try is recorded in ctx; the accepted
// one comes back unrecorded in Produced::attempt (kind ok) for the caller.
class StructuredGenerator {
 public:
  // `rules` runs the spec's exec rules (none: a spec with one fails).
  StructuredGenerator(ProviderLookup providers, ModelDowngrades& downgrades,
                      providers::RetryingProviderOptions options = {}, RuleRunner* rules = nullptr);

  // `sample` numbers the judge samples of one review (request metadata).
  // The prompt is kept for the generation's life (a fallback or a downgrade
  // asks again from it).
  boost::asio::awaitable<Result<Produced>> Generate(const GenerationSpec& spec, Prompt prompt, InvocationContext& ctx,
                                                    int sample = 0) const;

 private:
  ProviderLookup providers_;
  ModelDowngrades& downgrades_;
  providers::RetryingProviderOptions options_;
  RuleRunner* rules_;
};

// Attempt raw texts are kept up to this many bytes.
inline constexpr std::size_t kMaxRawBytes = 64 * 1024;
std::string CapRaw(std::string_view text);

// A response_format name ([a-zA-Z0-9_-], at most 64) made from any text.
std::string ResponseFormatName(std::string name);

}  // namespace skillrunner::generation
