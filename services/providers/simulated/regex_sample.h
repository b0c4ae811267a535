#pragma once

// Strings that match a JSON Schema `pattern`, for the simulated provider.
//
// Supports the subset of ECMAScript regular expressions that schemas use in
// practice: literals and escaped literals, \d \w \s \D \W \S, `.`, character
// classes ([a-z0-9+() -], [^...]), groups ((...), (?:...)), alternation `|`,
// quantifiers ? * + {m} {m,} {m,n} (lazy forms too) and the anchors ^ $.
// Lookarounds and back-references are not supported.

#include <optional>
#include <string>
#include <string_view>

#include "services/providers/simulated/sim_random.h"

namespace skillrunner::providers::simulation {

// A string in which std::regex (ECMAScript, search semantics, as JSON Schema
// applies `pattern`) finds `pattern`; nullopt when the pattern is outside the
// subset or the sample does not verify. Thread-safe.
std::optional<std::string> SampleRegex(std::string_view pattern, Rng& rng);

// Whether std::regex finds `pattern` in `text` (false for a pattern std::regex
// rejects). Compiled patterns are cached per thread.
bool RegexSearch(std::string_view pattern, std::string_view text);

}  // namespace skillrunner::providers::simulation
