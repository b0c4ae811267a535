// The requests of one connection: reading a line's messages, dispatching
// each method, and running skills.invoke on the connection's strand.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "runner/logging.h"
#include "runner/server/connection.h"
#include "runner/server/methods.h"
#include "runner/server/token.h"
#include "services/common/json_text.h"
#include "services/common/stream_events.h"
#include "services/common/stream_timer.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::server {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// OVERLOADED at an in-flight bound: retry after about one invocation's time.
constexpr std::int64_t kMinRetryAfterMs = 10;
constexpr std::int64_t kMaxRetryAfterMs = 5000;
// ... and before any invocation has finished.
constexpr std::int64_t kNoneFinishedRetryAfterMs = 1000;
// While draining: the drain's time left, but not sooner than this.
constexpr std::int64_t kMinDrainRetryAfterMs = 1000;
constexpr std::string_view kUnknownSkill = "_unknown";
constexpr int kMaxFailedAuth = 3;

// What one invocation came to, made where it ran (before its answer is sent).
// Passed up boxed (DonePtr): each coroutine frame and handler it passes
// through would otherwise hold room for a whole Done while it is in flight.
struct Done {
  std::string line;     // the serialized answer (single requests)
  json::object answer;  // the answer (batch members)
  std::string outcome;  // "ok" or the error code
  Metrics metrics;
  double seconds = 0;
};

using DonePtr = std::unique_ptr<Done>;

json::object Overloaded(const json::value& id, std::string message, std::int64_t retry_after_ms) {
  return ErrorAnswer(
      id, JsonRpcCodeFor(ErrorCode::kOverloaded), message,
      json::object{
          {"code", ErrorCodeName(ErrorCode::kOverloaded)}, {"message", message}, {"retry_after_ms", retry_after_ms}});
}

// The access log's line of one invocation: who asked for what and what it
// cost; never the input.
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

// Who asked, for the tenant's quota.
struct CallerQuota {
  std::string tenant;  // "": the admin, no quota
  state::TenantQuotas* quotas = nullptr;
};

// DESIGN 10.8: a batch is answered as one array, so its members cannot stream.
std::vector<FieldError> StreamInBatch() {
  return {{"/options/stream", "streaming is not available inside a batch: send the request on a line of its own"}};
}

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
                 Clock::TimePoint start, StreamEvents* events) {
  if (events != nullptr) events->Flush();
  auto box = std::make_unique<Done>();
  Done& done = *box;
  done.seconds = std::chrono::duration<double>(clock.Now() - start).count();
  json::object answer;
  if (outcome) {
    done.outcome = "ok";
    done.metrics = outcome->metrics;
    answer = ResultAnswer(id, ToJson(*outcome));
  } else {
    const InvocationFailure& failure = outcome.error();
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

// An invocation a bug stopped: logged with what it said, answered as -32603.
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
                                       json::value id, bool serialize, CallerQuota caller) {
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
  co_return Conclude(co_await std::move(invocation), id, serialize, clock, start, events);
}

}  // namespace

void Connection::Answer(const Reply& reply, json::object answer) {
  if (reply.notification) return;
  if (!reply.batch) {
    Send(CompactJson(answer));
    return;
  }
  reply.batch->answers[reply.slot] = std::move(answer);
  if (--reply.batch->pending > 0) return;
  json::array all;
  for (auto& a : reply.batch->answers) {
    if (a) all.push_back(std::move(*a));
  }
  Send(CompactJson(all));
}

void Connection::HandleLine(std::string_view line) {
  auto parsed = ParseLine(line, state_->options.limits.max_depth);
  if (auto* error = std::get_if<json::object>(&parsed)) {
    state_->metrics.RecordRejected("malformed");
    Send(CompactJson(*error));
    return;
  }
  ParsedLine& messages = std::get<ParsedLine>(parsed);
  if (!messages.batch) {
    Message& message = messages.messages.front();
    if (auto* error = std::get_if<json::object>(&message)) {
      state_->metrics.RecordRejected("malformed");
      Send(CompactJson(*error));
    } else {
      Call& call = std::get<Call>(message);
      Reply reply;
      reply.notification = call.notification;
      HandleCall(std::move(call), reply);
    }
    return;
  }
  // A batch is answered with one array once every member has its answer
  // (JSON-RPC 2.0 §6); notifications have no place in it.
  const std::size_t max_batch = state_->options.limits.max_batch;
  if (messages.messages.size() > max_batch) {
    state_->metrics.RecordRejected("batch_too_large");
    Send(CompactJson(ErrorAnswer(nullptr, kInvalidRequest,
                                 "Invalid Request: a batch of " + std::to_string(messages.messages.size()) +
                                     " requests is over the limit of " + std::to_string(max_batch),
                                 json::object{{"max_batch", max_batch}})));
    return;
  }
  auto batch = std::make_shared<Batch>();
  std::vector<Reply> replies;
  for (const Message& message : messages.messages) {
    Reply reply;
    const Call* call = std::get_if<Call>(&message);
    if (call && call->notification) {
      reply.notification = true;
    } else {
      reply.batch = batch;
      reply.slot = batch->answers.size();
      batch->answers.emplace_back();
    }
    replies.push_back(reply);
  }
  batch->pending = batch->answers.size();
  for (std::size_t i = 0; i < messages.messages.size(); ++i) {
    if (auto* error = std::get_if<json::object>(&messages.messages[i])) {
      Answer(replies[i], std::move(*error));
    } else {
      HandleCall(std::move(std::get<Call>(messages.messages[i])), replies[i]);
    }
  }
}

std::optional<std::string> Connection::Identify(std::string_view token) const {
  if (token.empty()) return std::nullopt;
  if (!state_->options.token.empty() && TokensEqual(token, state_->options.token)) return std::string();
  for (const auto& tenant : state_->options.tenants) {
    if (TokensEqual(token, tenant.token)) return tenant.name;
  }
  return std::nullopt;
}

std::optional<std::string> Connection::Caller(const Call& call) {
  if (!call.auth.empty()) {
    if (auto who = Identify(call.auth)) return who;
  }
  if (authenticated_) return tenant_;
  return std::nullopt;
}

void Connection::HandleCall(Call call, Reply reply) {
  state_->metrics.RecordRequest(IsKnownMethod(call.method) ? call.method : "unknown");
  if (call.method == "auth") {
    std::string token = ParamString(call.params, "token");
    if (auto who = Identify(token)) {
      authenticated_ = true;
      tenant_ = *who;
      json::object result{{"authenticated", true}};
      if (!tenant_.empty()) result["tenant"] = tenant_;
      Answer(reply, ResultAnswer(call.id, std::move(result)));
    } else if (state_->options.token.empty() && state_->options.tenants.empty()) {
      Answer(reply, ResultAnswer(call.id, json::object{{"authenticated", true}}));
    } else {
      state_->metrics.RecordRejected("unauthorized");
      spdlog::warn("connection {} ({}): auth failed", id_, peer_);
      Answer(reply, UnauthorizedAnswer(call.id, "the token is wrong"));
      // Guessing costs a reconnect every few tries.
      if (++failed_auth_ >= kMaxFailedAuth) Abort("too many failed auth attempts");
    }
    return;
  }
  std::optional<std::string> caller = Caller(call);
  if (!caller) {
    state_->metrics.RecordRejected("unauthorized");
    Answer(reply, UnauthorizedAnswer(call.id,
                                     "this listener needs a token: send {\"method\":\"auth\","
                                     "\"params\":{\"token\":…}} first, or \"auth\" in each request"));
    return;
  }
  if (call.method == "skills.invoke") {
    StartInvoke(std::move(call), reply, *caller);
    return;
  }
  if (call.method == "$/cancel") {
    HandleCancel(call, reply);
    return;
  }
  Answer(reply, HandleSimpleMethod(*state_, call));
}

void Connection::HandleCancel(const Call& call, const Reply& reply) {
  const json::value* id = ParamMember(call.params, "id");
  std::optional<FieldError> bad;
  if (!call.params.is_object()) {
    bad = FieldError{"", "expected an object {id}: the id of the skills.invoke request to cancel"};
  } else if (id == nullptr) {
    bad = FieldError{"/id", "missing: the id of the skills.invoke request to cancel"};
  } else if (!id->is_string() && !id->is_number() && !id->is_null()) {
    bad = FieldError{"/id", "expected a string, a number or null (a JSON-RPC id)"};
  }
  if (bad) {
    Answer(reply, InvalidParamsAnswer(call.id, {*bad}));
    return;
  }
  bool cancelled = false;
  if (auto it = in_flight_.find(IdKey(*id)); it != in_flight_.end()) {
    it->second->Cancel();
    cancelled = true;
  }
  Answer(reply, ResultAnswer(call.id, json::object{{"cancelled", cancelled}}));
}

StreamEvents* Connection::StartStream(InFlight& flight, const json::value& id, std::chrono::milliseconds interval) {
  std::weak_ptr<Connection> weak = shared_from_this();
  auto emit = [weak, id, executor = socket_.get_executor()](std::string_view method, json::object params) {
    params["id"] = id;
    std::string line = CompactJson(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
    asio::post(executor, [weak, line = std::move(line)]() mutable {
      if (auto self = weak.lock()) self->Send(std::move(line));
    });
  };
  flight.events = std::make_shared<StreamEvents>(std::move(emit), interval, state_->clock,
                                                 MakeClockTimer(state_->clock, flight.strand));
  return flight.events.get();
}

bool Connection::RefusedForLoad(const Call& call, const Reply& reply) {
  const ServerLimits& limits = state_->options.limits;
  if (draining_ || state_->draining.load()) {
    state_->metrics.RecordRejected("draining");
    Answer(reply, Overloaded(call.id, "the server is shutting down and takes no new invocations",
                             std::max(kMinDrainRetryAfterMs, state_->DrainLeftMs())));
    return true;
  }
  // About one invocation's time: the median of the recent ones.
  const std::int64_t retry_after = std::clamp(state_->metrics.RecentMedianMs().value_or(kNoneFinishedRetryAfterMs),
                                              kMinRetryAfterMs, kMaxRetryAfterMs);
  if (in_flight_.size() >= limits.max_in_flight_per_connection) {
    state_->metrics.RecordRejected("overloaded");
    Answer(reply, Overloaded(call.id,
                             "overloaded: this connection already has " + std::to_string(in_flight_.size()) +
                                 " invocations in flight (max_in_flight_per_connection)",
                             retry_after));
    return true;
  }
  if (state_->metrics.in_flight() >= static_cast<std::int64_t>(limits.max_in_flight_total)) {
    state_->metrics.RecordRejected("overloaded");
    Answer(reply, Overloaded(call.id,
                             "overloaded: the server has " + std::to_string(limits.max_in_flight_total) +
                                 " invocations in flight (max_in_flight_total)",
                             retry_after));
    return true;
  }
  return false;
}

void Connection::StartInvoke(Call call, Reply reply, const std::string& tenant) {
  auto params = ReadInvokeParams(call.params);
  if (params && params->stream && reply.batch) params = std::unexpected(StreamInBatch());
  if (!params) {
    Answer(reply, InvalidParamsAnswer(call.id, params.error()));
    return;
  }
  if (RefusedForLoad(call, reply)) return;
  std::string key = call.notification ? "#" + std::to_string(++anonymous_) : IdKey(call.id);
  if (in_flight_.contains(key)) {
    Answer(reply, ErrorAnswer(call.id, kInvalidRequest,
                              "Invalid Request: id " + key + " is already in flight on this connection"));
    return;
  }
  std::shared_ptr<SkillRunner> runner = state_->host.Current();
  // Metrics are labelled by skill: a client must not be able to mint labels.
  std::string label = runner->registry()->FindSkill(params->skill) ? params->skill : std::string(kUnknownSkill);
  // On the connection's strand: the answer is written without a hop to another thread and back.
  auto flight = std::make_shared<InFlight>(
      InFlight{.strand = socket_.get_executor(), .skill = std::move(label), .events = nullptr});
  in_flight_.emplace(key, flight);
  state_->metrics.AddInFlight(1);

  auto self = shared_from_this();
  json::value id = call.id;
  bool serialize = reply.batch == nullptr;
  auto on_done = [self, key, reply, flight, id, tenant](std::exception_ptr e, DonePtr done) mutable {
    asio::dispatch(self->socket_.get_executor(), [self, key = std::move(key), reply = std::move(reply), flight,
                                                  id = std::move(id), tenant, e, done = std::move(done)]() mutable {
      self->in_flight_.erase(key);
      self->state_->metrics.AddInFlight(-1);
      if (e) {
        LogInternalError(key, flight->skill, e);
        self->Answer(reply, ErrorAnswer(id, kInternalError, "Internal error: the invocation failed unexpectedly"));
      } else {
        self->state_->metrics.RecordInvocation(flight->skill, done->outcome, done->metrics, done->seconds);
        if (spdlog::should_log(spdlog::level::info)) {
          json::object event{{"conn", self->id_}, {"id", id}};
          if (!tenant.empty()) event["tenant"] = tenant;  // the name, never the token
          LogEvent(spdlog::level::info, "invoke", AccessLogFields(std::move(event), flight->skill, *done));
        }
        if (!done->line.empty() && !reply.notification) {
          self->Send(std::move(done->line));
        } else {
          self->Answer(reply, std::move(done->answer));
        }
      }
      self->CloseIfDone();
    });
  };
  // On the heap until the invocation starts: RunInvocation's frame, held
  // while the invocation is in flight, keeps none of it.
  auto request = std::make_unique<InvokeParams>(std::move(*params));
  if (request->stream) request->options.stream = StartStream(*flight, call.id, request->partial_interval);
  asio::co_spawn(flight->strand,
                 RunInvocation(std::move(runner), std::move(request), call.id, serialize,
                               CallerQuota{tenant, state_->options.quotas}),
                 asio::bind_cancellation_slot(flight->signal->slot(), std::move(on_done)));
}

}  // namespace skillrunner::server
