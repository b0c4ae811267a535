#include "runner/exec_rules.h"

#include <boost/json/serialize.hpp>

#include "services/common/json_pointer.h"
#include "services/common/utf8.h"
#include "services/handler/exec_handler.h"

namespace skillrunner {
namespace json = boost::json;
namespace {

// A rule prints a short list; more than this is a runaway program.
constexpr std::size_t kMaxRuleOutputBytes = 1024 * 1024;

Error Named(Error error, const generation::ExecRule& rule) {
  error.details["validator"] = rule.name;
  return error;
}

}  // namespace

Result<std::vector<FieldError>> ParseRejections(const json::value& printed) {
  const json::array* list = printed.if_array();
  if (list == nullptr) return Fail(ErrorCode::kHandlerFailed, "the output is not a list");
  std::vector<FieldError> rejections;
  rejections.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string at = "/" + std::to_string(i);
    const json::object* item = (*list)[i].if_object();
    if (item == nullptr) return Fail(ErrorCode::kHandlerFailed, at + " is not an object");
    for (const auto& [key, value] : *item) {
      if (key != "path" && key != "message")
        return Fail(ErrorCode::kHandlerFailed, at + " has an unknown key \"" + std::string(key) + "\"");
    }
    const json::value* path = item->if_contains("path");
    const json::value* message = item->if_contains("message");
    std::vector<std::string> tokens;
    if (path == nullptr || !path->is_string() || !ParsePointer(path->as_string(), tokens)) {
      return Fail(ErrorCode::kHandlerFailed, at + "/path is not a JSON pointer");
    }
    if (message == nullptr || !message->is_string() || message->as_string().empty()) {
      return Fail(ErrorCode::kHandlerFailed, at + "/message is not a non-empty string");
    }
    rejections.push_back({std::string(path->as_string()), std::string(message->as_string())});
  }
  return rejections;
}

boost::asio::awaitable<Result<std::vector<FieldError>>> ExecRules::Run(const generation::ExecRule& rule,
                                                                       const json::value& answer,
                                                                       InvocationContext& ctx) {
  const std::string who = "validator \"" + rule.name + "\"";
  std::chrono::milliseconds timeout = handler::TimeoutWithin(rule.timeout, ctx);
  if (timeout <= std::chrono::milliseconds(0))
    co_return std::unexpected(Named(handler::TimedOutBeforeStart(who), rule));
  // A named request: g++ 12 mis-destroys aggregate temporaries passed by
  // value into a coroutine inside a co_await expression.
  handler::ProcessRequest request{
      .argv = rule.argv,
      .working_dir = rule.dir,
      .stdin_data = json::serialize(answer) + "\n",
      .timeout = timeout,
      .max_output_bytes = kMaxRuleOutputBytes,
  };
  Result<handler::ProcessOutcome> outcome = co_await processes_.Run(std::move(request));
  if (!outcome) {
    Error error = handler::CannotStart(std::move(outcome.error()));
    if (error.code == ErrorCode::kHandlerFailed) error.message = who + ": " + error.message;
    co_return std::unexpected(Named(std::move(error), rule));
  }
  Result<json::value> printed = handler::InterpretOutcome(*outcome, timeout, kMaxRuleOutputBytes, who);
  if (!printed) co_return std::unexpected(Named(std::move(printed.error()), rule));
  auto rejections = ParseRejections(*printed);
  if (!rejections) {
    Error error = std::move(rejections.error());
    error.WithContext(who + " must print a list of {\"path\", \"message\"}");
    error.details["exit_status"] = outcome->exit_status;
    error.details["stderr_tail"] = SanitizeUtf8(outcome->stderr_tail);
    co_return std::unexpected(Named(std::move(error), rule));
  }
  co_return std::move(*rejections);
}

}  // namespace skillrunner
