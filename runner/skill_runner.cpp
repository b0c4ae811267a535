#include "runner/skill_runner.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "runner/rollout_routing.h"

namespace skillrunner {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// A handler enforces its own time limit (and kills its process); the runner's
// race only catches a service that ignores its deadline.
constexpr std::chrono::milliseconds kHandlerGrace{2000};
constexpr std::chrono::milliseconds kDefaultTimeout{60000};

InvocationFailure Failure(Error error, InvocationContext& ctx, Clock::TimePoint start) {
  ctx.metrics().duration_ms = ctx.clock().ElapsedMs(start);
  return InvocationFailure{std::move(error), ctx.TakeAttempts(), ctx.metrics()};
}

std::string PluralErrors(std::size_t n) { return std::to_string(n) + (n == 1 ? " error" : " errors"); }

Error UnknownSkill(const SkillRegistry& registry, std::string_view skill_id) {
  std::string message = "unknown skill \"" + std::string(skill_id) + "\"";
  auto similar = registry.SimilarSkillIds(skill_id);
  if (!similar.empty()) {
    message += " (did you mean ";
    for (std::size_t i = 0; i < similar.size(); ++i) message += (i ? ", \"" : "\"") + similar[i] + "\"";
    message += "?)";
  }
  return Error{ErrorCode::kSkillNotFound, message, {}, {}};
}

std::optional<Error> CheckInput(const Skill& skill, const json::value& input) {
  if (!skill.input_schema) return std::nullopt;
  auto errors = skill.input_schema->Validate(input);
  if (errors.empty()) return std::nullopt;
  return Error{
      ErrorCode::kInputInvalid,
      "input does not match the input_schema of skill \"" + skill.id + "\" (" + PluralErrors(errors.size()) + ")",
      std::move(errors),
      {}};
}

// Checks an output the service did not validate and records its attempt
// with the kind it comes to.
std::optional<Error> CheckAndRecord(const Skill& skill, const SkillService& service, Produced& produced,
                                    InvocationContext& ctx) {
  const bool is_handler = skill.template_type == TemplateType::kHandler;
  std::vector<FieldError> errors;
  if (skill.output_schema && !service.ValidatesOutput()) errors = skill.output_schema->Validate(produced.value);
  if (produced.attempt) {
    if (!errors.empty()) {
      produced.attempt->kind = is_handler ? AttemptKind::kHandler : AttemptKind::kValidation;
      produced.attempt->errors = errors;
    }
    ctx.AddAttempt(std::move(*produced.attempt));
  }
  if (errors.empty()) return std::nullopt;
  Error error{is_handler ? ErrorCode::kHandlerFailed : ErrorCode::kMaxRetriesExceeded,
              std::string(is_handler ? "handler" : "service") + " output does not match the output_schema of skill \"" +
                  skill.id + "\" (" + PluralErrors(errors.size()) + ")",
              std::move(errors),
              {}};
  if (is_handler) error.details = ctx.details();
  return error;
}

// Why the invocation cannot run (an unknown skill, one that did not load,
// an input that fails its schema, no service for its template_type), or
// nullopt with `service` set.
std::optional<Error> Admit(const SkillRegistry& registry, std::string_view skill_id, const Skill* skill,
                           const json::value& input,
                           const std::map<TemplateType, std::shared_ptr<SkillService>>& services,
                           InvocationContext& ctx, SkillService*& service) {
  if (skill == nullptr) {
    if (auto why = registry.FailedSkill(skill_id)) {
      return Error{ErrorCode::kConfigInvalid, "skill \"" + std::string(skill_id) + "\" did not load: " + *why, {}, {}};
    }
    return UnknownSkill(registry, skill_id);
  }
  if (skill->template_type == TemplateType::kHandler) ctx.metrics().mode = RunMode::kHandler;
  if (auto invalid = CheckInput(*skill, input)) return invalid;
  auto found = services.find(skill->template_type);
  if (found == services.end()) {
    return Error{ErrorCode::kConfigInvalid,
                 "no service is registered for template_type " + std::string(TemplateTypeName(skill->template_type)) +
                     " (skill \"" + skill->id + "\"): this build of skillrunner cannot run it",
                 {},
                 {}};
  }
  service = found->second.get();
  return std::nullopt;
}

// The version of `stable` that answers (design.md §11.2); none, with `refused`
// set, when the call pins a version the skill does not have.
Route RouteOrRefuse(const Skill* stable, const json::value& input, const InvocationOptions& options,
                    rollout::RolloutBook* book, std::unique_ptr<Error>& refused) {
  if (stable == nullptr) return Route{};
  auto routed = RouteCall(*stable, input, options, book);
  if (routed) return *routed;
  refused = std::make_unique<Error>(std::move(routed.error()));
  return Route{};
}

// The rare refusal, boxed: a coroutine's locals are all in its frame, held
// for as long as the invocation is in flight.
std::unique_ptr<Error> Boxed(std::optional<Error> error) {
  return error ? std::make_unique<Error>(std::move(*error)) : nullptr;
}

// The outcome of a service's run: its output checked (when it did not
// check it itself) and its held attempt recorded.
InvocationOutcome Finish(const Skill& skill, const SkillService& service, Result<Produced> produced,
                         InvocationContext& ctx, Clock::TimePoint start) {
  if (!produced) return std::unexpected(Failure(std::move(produced.error()), ctx, start));
  if (auto bad = CheckAndRecord(skill, service, *produced, ctx)) {
    return std::unexpected(Failure(std::move(*bad), ctx, start));
  }
  ctx.metrics().duration_ms = ctx.clock().ElapsedMs(start);
  return InvocationResult{skill.id, std::move(produced->value), std::move(ctx.review()), ctx.TakeAttempts(),
                          ctx.metrics()};
}

// The race of a service against its deadline. The service runs as a child
// coroutine with a cancellation signal of its own, emitted by whichever of
// the deadline and the caller's cancellation comes first; a parallel group
// (`||`) would cost every invocation in flight two more frames. Shared with
// the timer's handler, which may run after the race is over; touched on the
// invocation's executor only.
struct DeadlineRace {
  asio::cancellation_signal signal;
  bool expired = false;
  bool cancelled = false;
  void Stop(bool& why) {
    why = true;
    signal.emit(asio::cancellation_type::terminal);
  }
};

}  // namespace

SkillRunner::SkillRunner(std::shared_ptr<const SkillRegistry> registry, Clock& clock)
    : registry_(std::move(registry)), clock_(clock) {}

void SkillRunner::RegisterService(TemplateType type, std::shared_ptr<SkillService> service) {
  services_[type] = std::move(service);
}

asio::awaitable<Result<Produced>> SkillRunner::RunBeforeDeadline(SkillService& service, const Skill& skill,
                                                                 const json::value& input, InvocationContext& ctx,
                                                                 std::chrono::milliseconds limit) {
  const bool is_handler = skill.template_type == TemplateType::kHandler;
  const auto executor = co_await asio::this_coro::executor;
  asio::cancellation_state outer = co_await asio::this_coro::cancellation_state;
  if (outer.cancelled() != asio::cancellation_type::none) co_return Fail(ErrorCode::kCancelled, "invocation cancelled");
  auto race = std::make_shared<DeadlineRace>();
  asio::steady_timer timer(executor);
  timer.expires_at(ctx.deadline() + (is_handler ? kHandlerGrace : std::chrono::milliseconds(0)));
  timer.async_wait([race](const boost::system::error_code& ec) {
    if (!ec && !race->cancelled) race->Stop(race->expired);
  });
  // The caller's cancellation (a client that went away, `$/cancel`, a drain
  // that ran out of time) reaches the service the same way: not a timeout.
  // (A caller without cancellation has no slot to hear it on.)
  asio::cancellation_slot caller = outer.slot();
  if (caller.is_connected()) {
    caller.assign([race](asio::cancellation_type) {
      if (!race->expired) race->Stop(race->cancelled);
    });
  }
  auto [thrown, produced] =
      co_await asio::co_spawn(executor, service.Run(skill, input, ctx),
                              asio::bind_cancellation_slot(race->signal.slot(), asio::as_tuple(asio::use_awaitable)));
  if (caller.is_connected()) caller.clear();
  timer.cancel();
  // Cancelled, the service's own answer stands when it gave one (its CANCELLED
  // names what was cut short, or it finished first), as when the two raced.
  if (race->cancelled) {
    if (!thrown) co_return std::move(produced);
    co_return Fail(ErrorCode::kCancelled, "invocation cancelled");
  }
  if (race->expired) {
    co_return Fail(is_handler ? ErrorCode::kHandlerFailed : ErrorCode::kTimeout,
                   std::string(is_handler ? "handler timed out" : "invocation timed out") + " after " +
                       std::to_string(limit.count()) + " ms");
  }
  if (thrown) std::rethrow_exception(thrown);
  co_return std::move(produced);
}

InvocationTrace SkillRunner::BeginTrace(std::string skill, InvocationOptions& options, bool& show_request) const {
  InvocationTrace trace;
  trace.skill = std::move(skill);
  trace.started = clock_.Now();
  show_request = options.show_request;
  if (auto ids = StartTrace(tracing_, options.traceparent)) {
    trace.ids = std::move(*ids);
    if (tracing_.capture_content && tracing_.sink) options.show_request = true;
  }
  return trace;
}

void SkillRunner::EndTrace(InvocationTrace& trace, InvocationOutcome& outcome, bool show_request) const {
  if (trace.ids.trace_id.empty()) return;
  trace.ended = clock_.Now();
  if (tracing_.sink && trace.ids.sampled) {
    // A full queue (a collector that is down or hangs) costs no span building.
    const std::size_t count = SpanCount(outcome);
    if (tracing_.sink->HasRoom(count)) {
      tracing_.sink->Export(InvocationSpans(trace, outcome, tracing_, clock_));
    } else {
      tracing_.sink->Drop(count);
    }
  }
  if (show_request) return;
  for (Attempt& attempt : outcome ? outcome->attempts : outcome.error().attempts) attempt.request.reset();
}

// One coroutine for the whole invocation (its frame is what an invocation
// in flight holds, with the deadline race and the service's): the checks
// before the service and the result after it are plain functions, and the
// outcome is made in the co_return (a local, or a temporary of the co_await's
// expression, would be a second and third InvocationOutcome in the frame).
asio::awaitable<InvocationOutcome> SkillRunner::Invoke(std::string_view skill_id, json::value input,
                                                       InvocationOptions options) {
  bool show_request = false;
  Clock::TimePoint start{};
  // Only a traced invocation keeps its trace, on the heap.
  std::unique_ptr<InvocationTrace> trace = [&] {
    InvocationTrace begun = BeginTrace(std::string(skill_id), options, show_request);
    start = begun.started;
    std::unique_ptr<InvocationTrace> kept;
    if (!begun.ids.trace_id.empty()) kept = std::make_unique<InvocationTrace>(std::move(begun));
    return kept;
  }();
  if (trace && tracing_.capture_content) {
    trace->input = &input;
    trace->eval = options.eval;
  }
  std::shared_ptr<const SkillRegistry> registry = registry_.load();
  const Skill* stable = registry->FindSkill(skill_id);
  std::unique_ptr<Error> misrouted;
  const Route route = RouteOrRefuse(stable, input, options, rollouts_.get(), misrouted);
  const Skill* skill = route.skill;
  const auto limit = options.timeout.value_or(skill ? skill->timeout : kDefaultTimeout);
  if (skill != nullptr && skill->max_cost_usd) {
    options.max_cost_usd = std::min(options.max_cost_usd.value_or(*skill->max_cost_usd), *skill->max_cost_usd);
  }
  InvocationContext ctx(std::string(skill_id), std::move(options), start + limit, clock_);
  ctx.set_started(start);
  if (ctx.options().stream != nullptr) ctx.set_attempt_observer(ResetOnAbandon(*ctx.options().stream));
  if (trace) {
    trace->invocation_id = ctx.invocation_id();
    ctx.set_trace(trace->ids);
  }
  SkillService* service = nullptr;
  asio::any_io_executor executor;
  if (!observers_.empty()) executor = co_await asio::this_coro::executor;
  auto end = [&](InvocationOutcome outcome) {
    (outcome ? outcome->served : outcome.error().served) = route.served;
    if (!observers_.empty()) Tell(registry, stable, route, input, outcome, executor);
    if (trace) EndTrace(*trace, outcome, show_request);
    return outcome;
  };
  if (misrouted) co_return end(std::unexpected(Failure(std::move(*misrouted), ctx, start)));
  if (auto refused = Boxed(Admit(*registry, skill_id, skill, input, services_, ctx, service))) {
    co_return end(std::unexpected(Failure(std::move(*refused), ctx, start)));
  }
  std::optional<handler::ProcessSlots::Slot> place;
  if (auto missed = co_await TakeProcessPlace(*skill, ctx, limit, start, place)) {
    co_return end(std::unexpected(Failure(std::move(*missed), ctx, start)));
  }
  Result<Produced> produced = co_await RunBeforeDeadline(*service, *skill, input, ctx, limit);
  place.reset();
  co_return end(Finish(*skill, *service, std::move(produced), ctx, start));
}

asio::awaitable<std::unique_ptr<Error>> SkillRunner::TakeProcessPlace(
    const Skill& skill, InvocationContext& ctx, std::chrono::milliseconds limit, Clock::TimePoint& start,
    std::optional<handler::ProcessSlots::Slot>& place) {
  if (!pools_ || skill.template_type != TemplateType::kHandler || skill.handler != "exec") co_return nullptr;
  handler::ProcessSlots& slots =
      skill.max_concurrent ? pools_->Own(skill.id, static_cast<std::size_t>(*skill.max_concurrent)) : pools_->shared();
  // Only a caller's own deadline bounds the wait (serve's timeout_ms); an eval's wait is bounded by
  // its concurrency and charged to nothing.
  const bool caller_deadline = ctx.options().timeout.has_value();
  handler::ProcessSlots::Waited waited =
      co_await slots.Acquire(caller_deadline ? ctx.deadline() : Clock::TimePoint::max());
  if (waited.slot) {
    place = std::move(waited.slot);
    if (!caller_deadline) {
      start = clock_.Now();
      ctx.set_started(start);
      ctx.set_deadline(start + limit);
    }
    co_return nullptr;
  }
  if (waited.missed == handler::ProcessSlots::Missed::kCancelled) {
    co_return std::make_unique<Error>(Error{ErrorCode::kCancelled, "invocation cancelled", {}, {}});
  }
  auto overloaded = std::make_unique<Error>(
      Error{ErrorCode::kOverloaded,
            "no handler process place came free before the deadline (" + std::to_string(slots.capacity()) +
                " run at once: handler_concurrency" + (skill.max_concurrent ? ", the skill's max_concurrent" : "") +
                "); retry in " + std::to_string(waited.retry_after.count()) + " ms",
            {},
            {}});
  overloaded->details["retry_after_ms"] = waited.retry_after.count();
  co_return overloaded;
}

void SkillRunner::Tell(std::shared_ptr<const SkillRegistry> registry, const Skill* stable, const Route& route,
                       const json::value& input, const InvocationOutcome& outcome,
                       const asio::any_io_executor& executor) {
  const InvocationSeen seen{std::move(registry), stable, route, input, outcome, executor, self_.lock()};
  for (const auto& observer : observers_) observer->Seen(seen);
}

asio::awaitable<InvocationOutcome> SkillRunner::Judge(const review::JudgeSpec& judge, const json::value& subject,
                                                      const json::value* context, InvocationOptions options) {
  bool show_request = false;
  InvocationTrace trace = BeginTrace(judge.review_id(), options, show_request);
  InvocationOutcome outcome = co_await RunJudge(judge, subject, context, std::move(options), trace);
  EndTrace(trace, outcome, show_request);
  co_return outcome;
}

asio::awaitable<InvocationOutcome> SkillRunner::RunJudge(const review::JudgeSpec& judge, const json::value& subject,
                                                         const json::value* context, InvocationOptions options,
                                                         InvocationTrace& trace) {
  const auto start = trace.started;
  const auto limit = options.timeout.value_or(kDefaultTimeout);
  InvocationContext ctx(judge.review_id(), std::move(options), start + limit, clock_);
  ctx.set_started(start);
  trace.invocation_id = ctx.invocation_id();
  if (!trace.ids.trace_id.empty()) ctx.set_trace(trace.ids);
  if (!judge_) {
    co_return std::unexpected(Failure({ErrorCode::kConfigInvalid, "no judge is installed", {}, {}}, ctx, start));
  }
  auto verdict = co_await judge_->Review(judge, subject, context, ctx);
  if (!verdict) co_return std::unexpected(Failure(std::move(verdict.error()), ctx, start));
  ctx.metrics().duration_ms = clock_.ElapsedMs(start);
  co_return InvocationResult{judge.review_id(), std::move(*verdict), std::nullopt, ctx.TakeAttempts(), ctx.metrics()};
}

}  // namespace skillrunner
