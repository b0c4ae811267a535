#include "runner/skill_runner.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace skillrunner {
namespace asio = boost::asio;
namespace json = boost::json;
using namespace asio::experimental::awaitable_operators;

namespace {

// A handler enforces its own time limit (and kills its process); the runner's
// race only catches a service that ignores its deadline.
constexpr std::chrono::milliseconds kHandlerGrace{2000};

InvocationFailure Failure(Error error, InvocationContext& ctx,
                          InvocationContext::Clock::time_point start) {
  ctx.metrics().duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  InvocationContext::Clock::now() - start)
                                  .count();
  return InvocationFailure{std::move(error), ctx.TakeAttempts(), ctx.metrics()};
}

std::string PluralErrors(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " error" : " errors");
}

}  // namespace

SkillRunner::SkillRunner(std::shared_ptr<const SkillRegistry> registry)
    : registry_(std::move(registry)) {}

void SkillRunner::RegisterService(TemplateType type, std::shared_ptr<SkillService> service) {
  services_[type] = std::move(service);
}

asio::awaitable<InvocationOutcome> SkillRunner::Invoke(std::string_view skill_id,
                                                       json::value input,
                                                       InvocationOptions options) {
  const auto start = InvocationContext::Clock::now();
  std::shared_ptr<const SkillRegistry> registry = registry_.load();
  const Skill* skill = registry->FindSkill(skill_id);
  auto timeout = options.timeout;
  InvocationContext ctx(std::string(skill_id), std::move(options),
                        start + timeout.value_or(skill ? skill->timeout : std::chrono::milliseconds(60000)));
  if (skill == nullptr) {
    std::string message = "unknown skill \"" + std::string(skill_id) + "\"";
    auto similar = registry->SimilarSkillIds(skill_id);
    if (!similar.empty()) {
      message += " (did you mean ";
      for (std::size_t i = 0; i < similar.size(); ++i) {
        message += (i ? ", \"" : "\"") + similar[i] + "\"";
      }
      message += "?)";
    }
    co_return std::unexpected(Failure({ErrorCode::kSkillNotFound, message, {}, {}}, ctx, start));
  }
  ctx.metrics().mode = skill->template_type == TemplateType::kHandler ? "handler" : "";

  if (skill->input_schema) {
    auto errors = skill->input_schema->Validate(input);
    if (!errors.empty()) {
      Error error{ErrorCode::kInputInvalid,
                  "input does not match the input_schema of skill \"" + skill->id + "\" (" +
                      PluralErrors(errors.size()) + ")",
                  std::move(errors), {}};
      co_return std::unexpected(Failure(std::move(error), ctx, start));
    }
  }

  auto service = services_.find(skill->template_type);
  if (service == services_.end()) {
    co_return std::unexpected(Failure(
        {ErrorCode::kConfigInvalid,
         "no service is registered for template_type " +
             std::string(TemplateTypeName(skill->template_type)) + " (skill \"" + skill->id +
             "\"): this build of skillrunner cannot run it",
         {}, {}},
        ctx, start));
  }

  bool is_handler = skill->template_type == TemplateType::kHandler;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_at(ctx.deadline() + (is_handler ? kHandlerGrace : std::chrono::milliseconds(0)));
  auto raced = co_await (service->second->Run(*skill, input, ctx) ||
                         timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (raced.index() == 1) {
    // The timer ends early only when the caller cancelled (a client that went
    // away, `$/cancel`, a drain that ran out of time): not a timeout.
    if (std::get<0>(std::get<1>(raced)) == asio::error::operation_aborted) {
      co_return std::unexpected(
          Failure({ErrorCode::kCancelled, "invocation cancelled", {}, {}}, ctx, start));
    }
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.deadline() - start);
    Error error{is_handler ? ErrorCode::kHandlerFailed : ErrorCode::kTimeout,
                std::string(is_handler ? "handler timed out" : "invocation timed out") + " after " +
                    std::to_string(limit.count()) + " ms",
                {}, {}};
    co_return std::unexpected(Failure(std::move(error), ctx, start));
  }
  Result<json::value> output = std::move(std::get<0>(raced));
  if (!output) co_return std::unexpected(Failure(std::move(output.error()), ctx, start));

  if (skill->output_schema && !service->second->ValidatesOutput()) {
    auto errors = skill->output_schema->Validate(*output);
    if (!errors.empty()) {
      if (Attempt* last = ctx.last_attempt()) {
        last->kind = is_handler ? "handler" : "validation";
        last->errors = errors;
      }
      Error error{is_handler ? ErrorCode::kHandlerFailed : ErrorCode::kMaxRetriesExceeded,
                  std::string(is_handler ? "handler" : "service") +
                      " output does not match the output_schema of skill \"" + skill->id +
                      "\" (" + PluralErrors(errors.size()) + ")",
                  std::move(errors), {}};
      if (is_handler) error.details = ctx.details();
      co_return std::unexpected(Failure(std::move(error), ctx, start));
    }
  }
  ctx.metrics().duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  InvocationContext::Clock::now() - start)
                                  .count();
  co_return InvocationResult{skill->id, std::move(*output), std::move(ctx.review()), ctx.TakeAttempts(),
                             ctx.metrics()};
}

}  // namespace skillrunner
