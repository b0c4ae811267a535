#pragma once

// `validators: - exec: [argv]` (design.md §9.2): the generation layer's
// RuleRunner over the handler layer's process runner.

#include "services/common/error.h"
#include "services/generation/rules.h"
#include "services/handler/process_runner.h"

namespace skillrunner {

// Runs an exec rule as exec handlers run: argv[0] with a slash in the skill
// folder, else on PATH; the answer as one line of JSON on stdin; the rule's
// timeout or the invocation's deadline, whichever comes first. The program
// prints [] or [{"path": "/x", "message": "..."}] (each path a JSON pointer
// into the answer, each message text) and exits 0. Anything else is
// HANDLER_FAILED with details {validator, exit_status, stderr_tail,
// signal?, timeout_ms?}:
//   validator "python3 rules.py" exited with status 3
//   validator "python3 rules.py" timed out after 2000 ms
//   validator "python3 rules.py" output is not JSON: syntax error at offset 0
//   validator "python3 rules.py" must print a list of {"path", "message"}: /0/path is not a JSON pointer
// Thread-safe if the process runner is; `processes` must outlive this.
class ExecRules : public generation::RuleRunner {
 public:
  explicit ExecRules(handler::ProcessRunner& processes) : processes_(processes) {}
  boost::asio::awaitable<Result<std::vector<FieldError>>> Run(const generation::ExecRule& rule,
                                                              const boost::json::value& answer,
                                                              InvocationContext& ctx) override;

 private:
  handler::ProcessRunner& processes_;
};

// The rejections an exec rule printed, or why its output is not
// [{"path", "message"}] ("/0/path is not a JSON pointer").
Result<std::vector<FieldError>> ParseRejections(const boost::json::value& printed);

}  // namespace skillrunner
