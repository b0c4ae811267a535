#pragma once

// Fault scripts for the simulated provider: which attempt of an invocation
// goes wrong, and how. The full entry shape is FaultScriptDocumentation().
//
// A script is a JSON array of entries. It comes from a skill's
// `simulation.faults` (checked by the registry at load time with
// ParseFaultScript) or from the simulated provider's `faults` setting in the
// config, whose entries may also carry "skill". For each attempt, entries
// from the skill's script that name the attempt win over config entries that
// name it; several entries may apply to one attempt.

#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::providers {

enum class FaultKind {
  kMissingField,
  kWrongType,
  kOutOfRange,
  kExtraField,
  kProse,
  kFence,
  kInvalidJson,
  kTruncate,
  kRefusal,
  kContentFilter,
  kRateLimit,
  kUnavailable,
  kVerdict,
};

// "missing_field", "wrong_type", ... as written in scripts.
std::string_view FaultKindName(FaultKind kind);

// One checked script entry.
struct Fault {
  std::vector<int> attempts;  // 1-based attempt numbers
  FaultKind kind = FaultKind::kMissingField;
  std::optional<std::string> path;                       // RFC 6901 pointer into the answer
  std::optional<std::chrono::milliseconds> retry_after;  // rate_limit, unavailable
  int status = 0;                                        // unavailable: 0 = 503
  std::string criterion;                                 // verdict: "" = every criterion
  std::string verdict = "fail";                          // verdict: pass|fail|indeterminate
  std::optional<double> confidence;                      // verdict
  std::string skill;                                     // config scripts: "" = every skill
  std::optional<int> version;                            // config scripts: only that skill version
  double probability = 1.0;                              // the share of matching attempts it fires on

  bool Applies(int attempt) const;
  // Whether an entry that applies to `attempt` fires for the request `seed` (the simulation seed of
  // its input and the request's seed); `index` tells apart the entries of one attempt. Always with
  // probability 1, never with 0, else a deterministic draw.
  bool Fires(std::uint64_t seed, int attempt, std::size_t index) const;
};

enum class FaultScriptScope {
  kSkill,   // a skill's simulation.faults: "skill" is not allowed
  kConfig,  // the provider config's faults: "skill" targets one skill
};

// Checks a script (null = no faults). Errors name the entry by JSON pointer
// relative to the script: `/0/fault: unknown fault "wrng_type" (did you mean
// "wrong_type"?)`, `/1: missing key "attempt"`.
Result<std::vector<Fault>> ParseFaultScript(const boost::json::value& script,
                                            FaultScriptScope scope = FaultScriptScope::kSkill);

// The faults for `attempt` of `skill_id` at `skill_version` (0: not known):
// the skill's entries that name the attempt if any, else the config entries
// that name it and target the skill (or no skill) and that version (or none).
// Script order is kept.
std::vector<Fault> FaultsForAttempt(const std::vector<Fault>& skill_faults, const std::vector<Fault>& config_faults,
                                    std::string_view skill_id, int skill_version, int attempt);

// The user documentation of the script format (plain text, for the README
// and `--help`).
std::string_view FaultScriptDocumentation();

}  // namespace skillrunner::providers
