#pragma once

// A skill's business rules (design.md §9.2 `validators:`), checked after the
// answer matched its schema: a rejection is an attempt of kind `rule` and
// spends the one validation retry, its messages fed back by pointer like
// schema errors.

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "services/common/error.h"
#include "services/common/invocation.h"

namespace skillrunner::generation {

// `when: {path, equals}`: the rule beside it applies only while the value at
// `path` equals `equals`.
struct RuleGuard {
  std::string path;
  boost::json::value equals;
};

// `exec: [argv]`: a program that reads the answer as one line of JSON on
// stdin and prints its rejections, [] or [{"path": "/x", "message": "..."}].
struct ExecRule {
  std::vector<std::string> argv;  // resolved as handler commands are (in `dir`, else on PATH)
  std::filesystem::path dir;      // the skill folder
  std::chrono::milliseconds timeout{2000};
  std::string name;  // how errors name it: the argv as written, space-separated
};

// One entry of `validators:`: non_empty pointers or an exec program.
struct Rule {
  std::optional<RuleGuard> when;
  // `non_empty`: each pointer must hold a value that is not "", [], {}, null
  // or absent.
  std::vector<std::string> non_empty;
  std::optional<ExecRule> exec;
};

// Runs exec rules. Generation never starts processes itself: the core
// supplies this (runner/exec_rules.h) over the handler layer's process runner.
class RuleRunner {
 public:
  virtual ~RuleRunner() = default;
  // The program's rejections of `answer`; a program that cannot start,
  // crashes, times out or prints anything but the list is HANDLER_FAILED
  // with details.validator = rule.name. Never a pass.
  virtual boost::asio::awaitable<Result<std::vector<FieldError>>> Run(const ExecRule& rule,
                                                                      const boost::json::value& answer,
                                                                      InvocationContext& ctx) = 0;
};

// The rejections of the non_empty rules alone, in order ({pointer, message}).
std::vector<FieldError> CheckNonEmpty(const std::vector<Rule>& rules, const boost::json::value& answer);

bool HasExecRules(const std::vector<Rule>& rules);

// Every rejection of `rules` for `answer`, in the order of the rules; exec
// rules run on `runner` (CONFIG_INVALID when there is none), and the first
// one that fails ends the check with its error.
boost::asio::awaitable<Result<std::vector<FieldError>>> CheckRules(const std::vector<Rule>& rules,
                                                                   const boost::json::value& answer, RuleRunner* runner,
                                                                   InvocationContext& ctx);

}  // namespace skillrunner::generation
