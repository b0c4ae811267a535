#include "runner/server/invocation_answer.h"

#include <spdlog/spdlog.h>

#include <boost/asio/this_coro.hpp>

#include "runner/server/json_rpc.h"
#include "services/common/json_text.h"
#include "services/common/stream_events.h"

namespace skillrunner::server {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// A tenant's slot longer than any invocation it could hold.
constexpr std::chrono::minutes kLongestLease{15};

std::chrono::milliseconds LeaseFor(const InvocationOptions& options) {
  if (!options.timeout) return kLongestLease;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*options.timeout) + std::chrono::seconds(5);
}

// A tenant's in-flight slot, given back however the invocation ends.
struct TenantSlot {
  explicit TenantSlot(CallerQuota who) : caller(std::move(who)) {}
  CallerQuota caller;
  state::TenantQuotas::Decision decision{};
  TenantSlot(const TenantSlot&) = delete;
  TenantSlot& operator=(const TenantSlot&) = delete;
  ~TenantSlot() {
    if (caller.quotas != nullptr && !caller.tenant.empty()) caller.quotas->Release(caller.tenant, decision);
  }
};

// The answer to an invocation over its tenant's quota.
DonePtr TenantRefusal(const json::value& id, const std::string& tenant, const state::TenantQuotas::Decision& decision,
                      bool serialize) {
  auto refused = std::make_unique<Done>();
  refused->outcome = std::string(ErrorCodeName(ErrorCode::kOverloaded));
  json::object answer = Overloaded(id,
                                   "tenant \"" + tenant + "\" is over its " + decision.reason + " quota; retry after " +
                                       std::to_string(decision.retry_after.count()) + " ms",
                                   decision.retry_after.count());
  if (serialize) {
    refused->line = CompactJson(answer);
  } else {
    refused->answer = std::move(answer);
  }
  return refused;
}

// The answer an invocation came to (single requests: serialized).
// A streamed invocation's held-back partial goes out before its answer.
DonePtr Conclude(InvocationOutcome outcome, const json::value& id, bool serialize, const Clock& clock,
                 Clock::TimePoint start, StreamEvents* events, const std::string& cancel_reason) {
  if (events != nullptr) events->Flush();
  auto box = std::make_unique<Done>();
  Done& done = *box;
  done.seconds = std::chrono::duration<double>(clock.Now() - start).count();
  json::object answer;
  if (outcome) {
    done.outcome = outcome->review && ReviewFailed(*outcome->review) ? "review_failed" : "ok";
    done.review = outcome->review;
    done.metrics = outcome->metrics;
    answer = ResultAnswer(id, ToJson(*outcome));
  } else {
    InvocationFailure& failure = outcome.error();
    if (failure.error.code == ErrorCode::kCancelled && !cancel_reason.empty()) {
      failure.error.message = "cancelled: " + cancel_reason;
    }
    done.outcome = std::string(ErrorCodeName(failure.error.code));
    done.metrics = failure.metrics;
    answer = ErrorAnswer(id, JsonRpcCodeFor(failure.error.code), failure.error.message, ErrorToJson(failure));
  }
  if (serialize) {
    done.line = CompactJson(answer);
  } else {
    done.answer = std::move(answer);
  }
  return box;
}

}  // namespace

json::object Overloaded(const json::value& id, std::string message, std::int64_t retry_after_ms) {
  return ErrorAnswer(
      id, JsonRpcCodeFor(ErrorCode::kOverloaded), message,
      json::object{
          {"code", ErrorCodeName(ErrorCode::kOverloaded)}, {"message", message}, {"retry_after_ms", retry_after_ms}});
}

json::object AccessLogFields(json::object event, const std::string& skill, const Done& done) {
  event["skill"] = skill;
  event["outcome"] = done.outcome;
  event["attempts"] = done.metrics.attempts;
  event["validation_retries"] = done.metrics.validation_retries;
  event["transient_retries"] = done.metrics.transient_retries;
  if (done.metrics.fallbacks > 0) event["fallbacks"] = done.metrics.fallbacks;
  if (done.metrics.escalated) event["escalated"] = true;
  event["input_tokens"] = done.metrics.input_tokens;
  event["output_tokens"] = done.metrics.output_tokens;
  event["duration_ms"] = static_cast<std::int64_t>(done.seconds * 1000);
  return event;
}

void LogInternalError(const std::string& key, const std::string& skill, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("invoke id={} skill={}: internal error: {}", key, skill, ex.what());
  }
}

// Its frame is part of every invocation in flight: it keeps only the skill
// id (SkillRunner::Invoke reads it through a string_view) and what the
// answer needs; the answer is made in a plain function.
asio::awaitable<DonePtr> RunInvocation(std::shared_ptr<SkillRunner> runner, std::unique_ptr<InvokeParams> request,
                                       json::value id, bool serialize, CallerQuota caller,
                                       std::shared_ptr<const std::string> cancel_reason) {
  // Cancellation (a client gone, `$/cancel`, a drain out of time) must come
  // back as a CANCELLED answer, not as an exception out of the next co_await.
  co_await asio::this_coro::throw_if_cancelled(false);
  const Clock& clock = runner->clock();
  const auto start = clock.Now();
  TenantSlot slot{std::move(caller)};
  if (slot.caller.quotas != nullptr && !slot.caller.tenant.empty()) {
    slot.decision = co_await slot.caller.quotas->Admit(slot.caller.tenant, LeaseFor(request->options));
    if (!slot.decision.admitted) co_return TenantRefusal(id, slot.caller.tenant, slot.decision, serialize);
  }
  const std::string skill = std::move(request->skill);
  StreamEvents* events = request->options.stream;
  auto invocation = runner->Invoke(skill, std::move(request->input), std::move(request->options));
  request.reset();
  co_return Conclude(co_await std::move(invocation), id, serialize, clock, start, events, *cancel_reason);
}

}  // namespace skillrunner::server
