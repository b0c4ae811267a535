#include "services/providers/simulated/fault_script.h"

#include <algorithm>
#include <array>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <utility>

#include "services/common/json_pointer.h"
#include "services/common/json_text.h"
#include "services/common/text.h"
#include "services/providers/simulated/schema_walk.h"
#include "services/providers/simulated/sim_random.h"

namespace skillrunner::providers {
namespace {

namespace json = boost::json;

constexpr std::array<std::pair<std::string_view, FaultKind>, 13> kKinds = {{
    {"missing_field", FaultKind::kMissingField},
    {"wrong_type", FaultKind::kWrongType},
    {"out_of_range", FaultKind::kOutOfRange},
    {"extra_field", FaultKind::kExtraField},
    {"prose", FaultKind::kProse},
    {"fence", FaultKind::kFence},
    {"invalid_json", FaultKind::kInvalidJson},
    {"truncate", FaultKind::kTruncate},
    {"refusal", FaultKind::kRefusal},
    {"content_filter", FaultKind::kContentFilter},
    {"rate_limit", FaultKind::kRateLimit},
    {"unavailable", FaultKind::kUnavailable},
    {"verdict", FaultKind::kVerdict},
}};

constexpr std::array<std::string_view, 13> kKeys = {
    "attempt", "fault",      "path",  "retry_after_ms", "retry_after_s", "status", "criterion",
    "verdict", "confidence", "skill", "comment",        "probability",   "version"};

constexpr std::string_view kDocumentation = R"doc(Fault scripts (simulated provider)

A fault script is a list of entries that make chosen attempts of an invocation
go wrong, so the retry loop, the transient backoff and the review gate can be
exercised offline. Put it in a skill's `simulation.faults`, or in the
simulated provider's `faults` setting in skillrunner.yaml, where an entry may
add "skill": "<id>" to target one skill. Attempts count every provider
request of one invocation from 1, transient retries included. When the
skill's script and the config both name an attempt, the skill's entries win.
Several entries may apply to one attempt.

Entry:
  attempt         required; an attempt number or a list of them: 1, [1, 2]
  fault           required; one of the kinds below
  path            JSON pointer into the answer (missing_field, wrong_type,
                  out_of_range, extra_field)
  retry_after_ms  rate_limit, unavailable: the retry-after the error carries
  retry_after_s   the same in seconds (give one of the two)
  status          unavailable: 408, 409, 429 or 500-599 (default 503)
  criterion       verdict: the criterion id (default: every criterion)
  verdict         verdict: pass, fail or indeterminate (default fail)
  confidence      verdict: 0-100 (default 90; 30 for indeterminate)
  skill           config only: the skill id the entry applies to
  version         config only: the skill version it applies to, so that a
                  rollout's candidate can be given faults its stable
                  version does not get (default: every version)
  probability     0-1 (default 1): the share of the attempts it names that
                  it fires on, drawn from the request (its input and its
                  seed) and the attempt number, so the same request always
                  draws the same; with 0.4 about 40% of inputs get the fault
  comment         ignored

Kinds, and what the answer of that attempt becomes:
  missing_field   the value at path is removed (default: the first required
                  property of the root object)
  wrong_type      the value at path is replaced by one of a type the schema
                  does not allow: a number by its English word ("two"), a
                  string by 42, a boolean by "yes", an object or array by a
                  string (default path: the first required property)
  out_of_range    the value at path breaks a bound: maximum + 1 (else minimum
                  - 1), maxLength + 1 characters (else "" under minLength),
                  maxItems + 1 items (else [] under minItems); default path:
                  the first bounded value, depth first; with no bound there,
                  it acts as wrong_type
  extra_field     an unexpected property is added; path names it (default
                  "/comment", numbered when the schema knows "comment")
  invalid_json    the JSON text is cut in the middle; finish_reason stays stop
  fence           the JSON is wrapped in ```json ... ```
  prose           a sentence is put before and after the JSON
  truncate        the text is cut in the middle; finish_reason length
  refusal         no text, refusal "I can't help with that.", finish_reason
                  refusal
  content_filter  no text, finish_reason content_filter
  rate_limit      an HTTP 429 error (type rate_limit_error, retryable) with
                  retry-after from retry_after_ms / retry_after_s (default
                  1000 ms)
  unavailable     an HTTP `status` error (default 503; retryable) with
                  retry-after only when given
  verdict         judges: sets the criterion's verdict, confidence and
                  reasoning, then recomputes pass, issues, suggested_fixes
                  and indeterminate where the answer has them

Within one attempt: rate_limit and unavailable come first (the first such
entry is the answer; nothing else applies); then missing_field, wrong_type,
out_of_range, extra_field and verdict in script order; then invalid_json,
fence, prose and truncate, in that order; refusal and content_filter last.

On a retry whose conversation lists the previous answer's errors (one per
line, "- /path: message" or "- (root): message"), the provider repairs only
the named values of its previous answer, each to a value that differs and is
not empty (so what a validator rejected changes too), then applies that
attempt's faults. A fresh retry (no assistant turn; the errors in a second
user turn) repairs the answer the original messages got.
So [{"attempt": 1, "fault": "wrong_type", "path": "/priority"}] makes attempt
1 invalid and its validation retry valid.

Example (skill.yaml):
  simulation:
    faults:
      - {attempt: 1, fault: wrong_type, path: /priority}
      - {attempt: 1, fault: fence}
      - {attempt: [2, 3], fault: rate_limit, retry_after_ms: 150}
)doc";

// As people write it (1.5, not Boost.JSON's 1.5E0).
std::string Describe(const json::value& value) { return CompactJson(value); }

template <typename Names>
std::string Suggestion(std::string_view word, const Names& names) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (const auto& entry : names) {
    std::string_view name;
    if constexpr (std::is_same_v<std::decay_t<decltype(entry)>, std::string_view>) {
      name = entry;
    } else {
      name = entry.first;
    }
    std::size_t distance = EditDistance(word, name);
    if (distance < best_distance) best_distance = distance, best = name;
  }
  if (best.empty()) return {};
  return " (did you mean \"" + std::string(best) + "\"?)";
}

std::optional<std::int64_t> AsInteger(const json::value& value) {
  if (value.is_int64()) return value.get_int64();
  if (value.is_uint64()) {
    return value.get_uint64() > static_cast<std::uint64_t>(INT64_MAX) ? std::nullopt
                                                                      : std::optional<std::int64_t>(value.get_uint64());
  }
  if (value.is_double() && std::floor(value.get_double()) == value.get_double() &&
      std::fabs(value.get_double()) < 9e15) {
    return static_cast<std::int64_t>(value.get_double());
  }
  return std::nullopt;
}

bool UsesPath(FaultKind kind) {
  return kind == FaultKind::kMissingField || kind == FaultKind::kWrongType || kind == FaultKind::kOutOfRange ||
         kind == FaultKind::kExtraField;
}
bool IsHttpError(FaultKind kind) { return kind == FaultKind::kRateLimit || kind == FaultKind::kUnavailable; }

// Whether `key` means something for `kind`.
bool KeyFits(std::string_view key, FaultKind kind) {
  if (key == "path") return UsesPath(kind);
  if (key == "retry_after_ms" || key == "retry_after_s") return IsHttpError(kind);
  if (key == "status") return kind == FaultKind::kUnavailable;
  if (key == "criterion" || key == "verdict" || key == "confidence") return kind == FaultKind::kVerdict;
  return true;
}

bool RetryableStatus(std::int64_t status) {
  return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

using Parsed = std::expected<void, std::string>;

Parsed ParseAttempts(const json::value& value, const std::string& at, Fault& fault) {
  auto one = [&](const json::value& v, const std::string& where) -> Parsed {
    auto n = AsInteger(v);
    if (!n || *n < 1 || *n > 1000000) {
      return std::unexpected(where + ": expected a positive attempt number, found " + Describe(v));
    }
    fault.attempts.push_back(static_cast<int>(*n));
    return {};
  };
  if (!value.is_array()) return one(value, at);
  if (value.get_array().empty()) return std::unexpected(at + ": expected at least one attempt number, found []");
  for (std::size_t i = 0; i < value.get_array().size(); ++i) {
    if (auto r = one(value.get_array()[i], at + "/" + std::to_string(i)); !r) return r;
  }
  return {};
}

Parsed ParseMember(std::string_view key, const json::value& value, const std::string& at, Fault& fault) {
  if (key == "path") {
    std::vector<std::string> tokens;
    if (!value.is_string() || !ParsePointer(value.get_string(), tokens)) {
      return std::unexpected(at + ": expected a JSON pointer (\"\" or \"/name\"), found " + Describe(value));
    }
    fault.path = std::string(value.get_string());
  } else if (key == "retry_after_ms" || key == "retry_after_s") {
    bool seconds = key == "retry_after_s";
    if (!value.is_number() || value.to_number<double>() < 0 || value.to_number<double>() > 86400000) {
      return std::unexpected(at + ": expected a non-negative number, found " + Describe(value));
    }
    if (fault.retry_after) {
      return std::unexpected(at + ": give either retry_after_ms or retry_after_s, not both");
    }
    double ms = value.to_number<double>() * (seconds ? 1000.0 : 1.0);
    fault.retry_after = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
  } else if (key == "status") {
    auto status = AsInteger(value);
    if (!status || !RetryableStatus(*status)) {
      return std::unexpected(at + ": expected a retryable HTTP status (408, 409, 429 or 500-599), found " +
                             Describe(value));
    }
    fault.status = static_cast<int>(*status);
  } else if (key == "criterion" || key == "skill") {
    if (!value.is_string() || value.get_string().empty()) {
      return std::unexpected(at + ": expected a non-empty string, found " + Describe(value));
    }
    (key == "skill" ? fault.skill : fault.criterion) = std::string(value.get_string());
  } else if (key == "verdict") {
    if (!value.is_string() ||
        (value.get_string() != "pass" && value.get_string() != "fail" && value.get_string() != "indeterminate")) {
      return std::unexpected(at + ": expected one of \"pass\", \"fail\", \"indeterminate\", found " + Describe(value));
    }
    fault.verdict = std::string(value.get_string());
  } else if (key == "version") {
    auto version = AsInteger(value);
    if (!version || *version < 1) {
      return std::unexpected(at + ": expected a skill version (an integer of at least 1), found " + Describe(value));
    }
    fault.version = static_cast<int>(*version);
  } else if (key == "probability") {
    if (!value.is_number() || value.to_number<double>() < 0 || value.to_number<double>() > 1) {
      return std::unexpected(at + ": expected a number from 0 to 1, found " + Describe(value));
    }
    fault.probability = value.to_number<double>();
  } else if (key == "confidence") {
    if (!value.is_number() || value.to_number<double>() < 0 || value.to_number<double>() > 100) {
      return std::unexpected(at + ": expected a number from 0 to 100, found " + Describe(value));
    }
    fault.confidence = value.to_number<double>();
  }
  return {};
}

std::expected<Fault, std::string> ParseEntry(const json::value& entry, const std::string& at, FaultScriptScope scope) {
  if (!entry.is_object()) return std::unexpected(at + ": expected an object, found " + Describe(entry));
  const json::object& object = entry.get_object();
  for (const auto& member : object) {
    std::string_view key = member.key();
    std::string where = at + MakePointer({std::string(key)});
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      return std::unexpected(where + ": unknown key \"" + std::string(key) + "\"" + Suggestion(key, kKeys));
    }
    if ((key == "skill" || key == "version") && scope == FaultScriptScope::kSkill) {
      return std::unexpected(where + ": \"" + std::string(key) + "\" is only allowed in the provider config's faults");
    }
  }
  Fault fault;
  const json::value* kind = object.if_contains("fault");
  if (kind == nullptr) return std::unexpected(at + ": missing key \"fault\"");
  if (!kind->is_string()) return std::unexpected(at + "/fault: expected a fault name, found " + Describe(*kind));
  auto found = std::find_if(kKinds.begin(), kKinds.end(), [&](const auto& k) { return k.first == kind->get_string(); });
  if (found == kKinds.end()) {
    std::string name(kind->get_string());
    return std::unexpected(at + "/fault: unknown fault \"" + name + "\"" + Suggestion(name, kKinds));
  }
  fault.kind = found->second;
  const json::value* attempt = object.if_contains("attempt");
  if (attempt == nullptr) return std::unexpected(at + ": missing key \"attempt\"");
  if (auto r = ParseAttempts(*attempt, at + "/attempt", fault); !r) return std::unexpected(r.error());
  for (const auto& member : object) {
    std::string_view key = member.key();
    std::string where = at + MakePointer({std::string(key)});
    if (!KeyFits(key, fault.kind)) {
      return std::unexpected(where + ": not used by fault \"" + std::string(found->first) + "\"");
    }
    if (auto r = ParseMember(key, member.value(), where, fault); !r) return std::unexpected(r.error());
  }
  return fault;
}

}  // namespace

std::string_view FaultKindName(FaultKind kind) {
  for (const auto& [name, k] : kKinds) {
    if (k == kind) return name;
  }
  return "unknown";
}

bool Fault::Applies(int attempt) const {
  return std::find(attempts.begin(), attempts.end(), attempt) != attempts.end();
}

bool Fault::Fires(std::uint64_t seed, int attempt, std::size_t index) const {
  if (probability >= 1.0) return true;
  if (probability <= 0.0) return false;
  simulation::Fnv1a hash;
  hash.Add(seed);
  hash.Add(static_cast<std::uint64_t>(attempt));
  hash.Add(static_cast<std::uint64_t>(index));
  return simulation::Rng(hash.value()).Unit() < probability;
}

Result<std::vector<Fault>> ParseFaultScript(const json::value& script, FaultScriptScope scope) {
  std::vector<Fault> faults;
  if (script.is_null()) return faults;
  if (!script.is_array()) {
    return Fail(ErrorCode::kConfigInvalid, "(root): expected an array of fault entries, found " + Describe(script));
  }
  const json::array& entries = script.get_array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto fault = ParseEntry(entries[i], "/" + std::to_string(i), scope);
    if (!fault) return Fail(ErrorCode::kConfigInvalid, std::move(fault.error()));
    faults.push_back(std::move(*fault));
  }
  return faults;
}

std::vector<Fault> FaultsForAttempt(const std::vector<Fault>& skill_faults, const std::vector<Fault>& config_faults,
                                    std::string_view skill_id, int skill_version, int attempt) {
  std::vector<Fault> out;
  for (const auto& fault : skill_faults) {
    if (fault.Applies(attempt)) out.push_back(fault);
  }
  if (!out.empty()) return out;
  for (const auto& fault : config_faults) {
    if (!fault.Applies(attempt) || (!fault.skill.empty() && fault.skill != skill_id)) continue;
    if (!fault.version || *fault.version == skill_version) out.push_back(fault);
  }
  return out;
}

std::string_view FaultScriptDocumentation() { return kDocumentation; }

}  // namespace skillrunner::providers
