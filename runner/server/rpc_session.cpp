#include "runner/server/rpc_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "runner/logging.h"
#include "runner/server/invocation_answer.h"
#include "runner/server/methods.h"
#include "services/common/json_text.h"
#include "services/common/stream_events.h"
#include "services/common/stream_timer.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::server {
namespace asio = boost::asio;
namespace json = boost::json;

void RpcSession::InFlight::Cancel(std::string reason) {
  // A signal may only be emitted where its operation runs: on its strand.
  asio::post(strand, [signal = signal, why = cancel_reason, reason = std::move(reason)]() mutable {
    if (!reason.empty()) *why = std::move(reason);
    signal->emit(asio::cancellation_type::terminal);
  });
}

RpcSession::RpcSession(std::shared_ptr<Server::State> state, Wire& wire, net::TransportPeer transport)
    : state_(std::move(state)), wire_(wire), transport_peer_(std::move(transport)) {}

RpcSession::~RpcSession() = default;

void RpcSession::CancelAll(const std::string& reason) {
  for (auto& [key, flight] : in_flight_) flight->Cancel(reason);
}

void RpcSession::Line(std::string_view line) {
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  try {
    HandleLine(line);
  } catch (const std::exception& e) {
    // A bug must cost this line its answer's content, not the connection.
    spdlog::error("connection {}: internal error on a request: {}", wire_.id(), e.what());
    wire_.Send(CompactJson(ErrorAnswer(nullptr, kInternalError, "Internal error while reading the request")));
  }
}

void RpcSession::LineTooLong() {
  state_->metrics.RecordRejected("line_too_long");
  const auto limit = state_->options.limits.max_line_bytes;
  wire_.Send(CompactJson(ErrorAnswer(nullptr, kInvalidRequest,
                                     "Invalid Request: line longer than the " + std::to_string(limit) +
                                         "-byte limit; it was skipped up to the next newline",
                                     json::object{{"max_line_bytes", limit}})));
}

// The requests: reading a line's messages, dispatching each method, and
// starting skills.invoke on the connection's strand.

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

// design.md §10.7: a batch is answered as one array, so its members cannot stream.
std::vector<FieldError> StreamInBatch() {
  return {{"/options/stream", "streaming is not available inside a batch: send the request on a line of its own"}};
}

}  // namespace

void RpcSession::Answer(const Reply& reply, json::object answer) {
  if (reply.notification) return;
  if (!reply.batch) {
    wire_.Send(CompactJson(answer));
    return;
  }
  reply.batch->answers[reply.slot] = std::move(answer);
  if (--reply.batch->pending > 0) return;
  json::array all;
  for (auto& a : reply.batch->answers) {
    if (a) all.push_back(std::move(*a));
  }
  wire_.Send(CompactJson(all));
}

void RpcSession::HandleLine(std::string_view line) {
  auto parsed = ParseLine(line, state_->options.limits.max_depth);
  if (auto* error = std::get_if<json::object>(&parsed)) {
    state_->metrics.RecordRejected("malformed");
    wire_.Send(CompactJson(*error));
    return;
  }
  ParsedLine& messages = std::get<ParsedLine>(parsed);
  if (!messages.batch) {
    Message& message = messages.messages.front();
    if (auto* error = std::get_if<json::object>(&message)) {
      state_->metrics.RecordRejected("malformed");
      wire_.Send(CompactJson(*error));
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
    wire_.Send(CompactJson(ErrorAnswer(nullptr, kInvalidRequest,
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

std::expected<net::Peer, net::Refusal> RpcSession::Caller(const Call& call) const {
  if (call.auth.empty() && session_peer_) return *session_peer_;
  return net::Identify(state_->options.identity, transport_peer_, call.auth);
}

void RpcSession::Authenticate(const Call& call, const Reply& reply) {
  const std::string token = ParamString(call.params, "token");
  auto who = net::Identify(state_->options.identity, transport_peer_, token);
  if (who) {
    session_peer_ = *who;
    json::object result{{"authenticated", true}};
    if (!who->admin) result["tenant"] = who->tenant;
    Answer(reply, ResultAnswer(call.id, std::move(result)));
    return;
  }
  state_->metrics.RecordRejected("unauthorized");
  spdlog::warn("connection {} ({}): auth failed: {}", wire_.id(), wire_.peer(), who.error().message);
  Answer(reply, UnauthorizedAnswer(call.id, who.error().message));
  // Guessing costs a reconnect every few tries.
  if (who.error().kind == net::Refusal::Kind::kWrongToken && ++failed_auth_ >= kMaxFailedAuth) {
    wire_.Abort("too many failed auth attempts");
  }
}

void RpcSession::HandleCall(Call call, Reply reply) {
  state_->metrics.RecordRequest(IsKnownMethod(call.method) ? call.method : "unknown");
  if (call.method == "auth") {
    Authenticate(call, reply);
    return;
  }
  auto caller = Caller(call);
  if (!caller) {
    state_->metrics.RecordRejected("unauthorized");
    Answer(reply, UnauthorizedAnswer(call.id, caller.error().kind == net::Refusal::Kind::kNoToken
                                                  ? "this listener needs a token: send {\"method\":\"auth\","
                                                    "\"params\":{\"token\":…}} first, or \"auth\" in each request"
                                                  : caller.error().message));
    return;
  }
  if (call.method == "skills.invoke") {
    StartInvoke(std::move(call), reply, caller->tenant);
    return;
  }
  if (call.method == "$/cancel") {
    HandleCancel(call, reply);
    return;
  }
  Answer(reply, HandleSimpleMethod(*state_, call));
}

void RpcSession::HandleCancel(const Call& call, const Reply& reply) {
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

StreamEvents* RpcSession::StartStream(InFlight& flight, const json::value& id, std::chrono::milliseconds interval) {
  std::weak_ptr<Wire> weak = wire_.Hold();
  auto emit = [weak, id, executor = wire_.executor()](std::string_view method, json::object params) {
    params["id"] = id;
    std::string line = CompactJson(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
    // Inline when already on the connection's strand (the invocation runs
    // there): queued behind the answer, a reset and a retry's partials would
    // reach the client after it.
    asio::dispatch(executor, [weak, line = std::move(line)]() mutable {
      if (auto wire = weak.lock()) wire->Send(std::move(line));
    });
  };
  flight.events = std::make_shared<StreamEvents>(std::move(emit), interval, state_->clock,
                                                 MakeClockTimer(state_->clock, flight.strand));
  return flight.events.get();
}

bool RpcSession::RefusedForLoad(const Call& call, const Reply& reply) {
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

void RpcSession::StartInvoke(Call call, Reply reply, const std::string& tenant) {
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
  auto flight =
      std::make_shared<InFlight>(InFlight{.strand = wire_.executor(), .skill = std::move(label), .events = nullptr});
  in_flight_.emplace(key, flight);
  state_->metrics.AddInFlight(1);

  // The connection stays open (and this session with it) until the answer is written.
  std::shared_ptr<Wire> held = wire_.Hold();
  json::value id = call.id;
  bool serialize = reply.batch == nullptr;
  auto on_done = [this, held, key, reply, flight, id, tenant](std::exception_ptr e, DonePtr done) mutable {
    asio::dispatch(held->executor(),
                   [this, held, key = std::move(key), reply = std::move(reply), flight, id = std::move(id), tenant, e,
                    done = std::move(done)]() mutable { Finished(key, reply, *flight, id, tenant, e, done.get()); });
  };
  // On the heap until the invocation starts: RunInvocation's frame, held
  // while the invocation is in flight, keeps none of it.
  auto request = std::make_unique<InvokeParams>(std::move(*params));
  if (request->stream) request->options.stream = StartStream(*flight, call.id, request->partial_interval);
  asio::co_spawn(flight->strand,
                 RunInvocation(std::move(runner), std::move(request), call.id, serialize,
                               CallerQuota{tenant, state_->options.quotas}, flight->cancel_reason),
                 asio::bind_cancellation_slot(flight->signal->slot(), std::move(on_done)));
}

void RpcSession::Finished(const std::string& key, const Reply& reply, const InFlight& flight, const json::value& id,
                          const std::string& tenant, std::exception_ptr failure, Done* done) {
  const std::string& skill = flight.skill;  // the caller holds the flight
  in_flight_.erase(key);
  state_->metrics.AddInFlight(-1);
  if (failure) {
    LogInternalError(key, skill, failure);
    Answer(reply, ErrorAnswer(id, kInternalError, "Internal error: the invocation failed unexpectedly"));
  } else {
    state_->metrics.RecordInvocation(skill, done->outcome, done->metrics, done->seconds,
                                     done->review ? &*done->review : nullptr);
    if (spdlog::should_log(spdlog::level::info)) {
      json::object event{{"conn", wire_.id()}, {"id", id}};
      if (!tenant.empty()) event["tenant"] = tenant;  // the name, never the token
      LogEvent(spdlog::level::info, "invoke", AccessLogFields(std::move(event), skill, *done));
    }
    if (!done->line.empty() && !reply.notification) {
      wire_.Send(std::move(done->line));
    } else {
      Answer(reply, std::move(done->answer));
    }
  }
  wire_.Settled();
}

}  // namespace skillrunner::server
