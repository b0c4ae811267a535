#include "services/handler/handler.h"

namespace skillrunner::handler {

namespace {

std::string PluralErrors(std::size_t n) { return std::to_string(n) + (n == 1 ? " error" : " errors"); }

}  // namespace

Result<boost::json::value> Conclude(const HandlerSpec& spec, Result<boost::json::value> result, Attempt attempt,
                                    InvocationContext& ctx) {
  if (result && spec.check_output) {
    auto errors = spec.check_output(*result);
    if (!errors.empty()) {
      attempt.kind = AttemptKind::kHandler;
      attempt.errors = errors;
      ctx.AddAttempt(std::move(attempt));
      Error error{ErrorCode::kHandlerFailed,
                  "handler output does not match the output_schema of skill \"" + spec.skill_id + "\" (" +
                      PluralErrors(errors.size()) + ")",
                  std::move(errors), ctx.details()};
      return std::unexpected(std::move(error));
    }
  }
  attempt.kind = result ? AttemptKind::kOk : AttemptKind::kHandler;
  if (!result) attempt.errors.push_back(FieldError{"", result.error().message});
  ctx.AddAttempt(std::move(attempt));
  return result;
}

}  // namespace skillrunner::handler
