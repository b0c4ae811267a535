#pragma once

// A skill's business rules (DESIGN 9.2 `validators:`), checked after the
// answer matched its schema: a rejection is an attempt of kind `rule` and
// spends the one validation retry, its messages fed back by pointer like
// schema errors.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::generation {

// `when: {path, equals}`: the rule beside it applies only while the value at
// `path` equals `equals`.
struct RuleGuard {
  std::string path;
  boost::json::value equals;
};

// One entry of `validators:`.
struct Rule {
  std::optional<RuleGuard> when;
  // `non_empty`: each pointer must hold a value that is not "", [], {}, null
  // or absent.
  std::vector<std::string> non_empty;
};

// Every rejection of `rules` for `answer`, in order ({pointer, message}).
std::vector<FieldError> CheckRules(const std::vector<Rule>& rules, const boost::json::value& answer);

}  // namespace skillrunner::generation
