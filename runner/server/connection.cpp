#include "runner/server/connection.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "runner/logging.h"
#include "runner/net/peer.h"
#include "runner/net/plain_text.h"
#include "runner/net/tls_server.h"
#include "runner/server/invocation_answer.h"
#include "runner/server/methods.h"
#include "services/common/json_text.h"
#include "services/common/stream_events.h"
#include "services/common/stream_timer.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::server {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Per connection for its whole life: small, so that a thousand connections
// cost little (a longer line is gathered by the framer).
constexpr std::size_t kReadChunk = 16 * 1024;

// A Unix peer that closed its end entirely (not just its writing half).
bool PeerHungUp(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
}

}  // namespace

void Connection::InFlight::Cancel(std::string reason) {
  // A signal may only be emitted where its operation runs: on its strand.
  asio::post(strand, [signal = signal, why = cancel_reason, reason = std::move(reason)]() mutable {
    if (!reason.empty()) *why = std::move(reason);
    signal->emit(asio::cancellation_type::terminal);
  });
}

struct Connection::Tls {
  Tls(Socket& socket, std::shared_ptr<asio::ssl::context> held) : context(std::move(held)), stream(socket, *context) {}
  std::shared_ptr<asio::ssl::context> context;  // this connection's for its life (a reload swaps the server's)
  asio::ssl::stream<Socket&> stream;
};

Connection::Connection(std::shared_ptr<Server::State> state, Socket socket, bool is_unix, std::string peer,
                       std::uint64_t id, std::shared_ptr<asio::ssl::context> tls)
    : state_(std::move(state)),
      socket_(std::move(socket)),
      tls_(tls ? std::make_unique<Tls>(socket_, std::move(tls)) : nullptr),
      is_unix_(is_unix),
      peer_(std::move(peer)),
      id_(id),
      // The Unix socket's file mode is its access control; TCP needs a token or a certificate
      // when the server has a token or tenants (design.md §12.1).
      transport_peer_(net::PeerOfTransport(state_->options.identity, net::Transport{is_unix, std::nullopt})),
      framer_(state_->options.limits.max_line_bytes),
      read_buffer_(kReadChunk),
      idle_timer_(socket_.get_executor()),
      last_activity_(state_->clock.Now()) {}

Connection::~Connection() = default;

void Connection::Start() {
  auto self = shared_from_this();
  state_->metrics.AddConnections(1);
  spdlog::debug("connection {} opened ({})", id_, peer_);
  auto log_failure = [self](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("connection {}: internal error: {}", self->id_, ex.what());
    }
    self->Abort("internal error");
  };
  asio::co_spawn(socket_.get_executor(), tls_ ? Handshake() : ReadLoop(), log_failure);
  asio::co_spawn(socket_.get_executor(), IdleWatch(), log_failure);
}

asio::awaitable<void> Connection::Handshake() {
  auto self = shared_from_this();
  if (co_await net::RefusePlainText(socket_)) {  // design.md §12.1: told why, in its own protocol
    state_->metrics.RecordRejected("tls_required");
    spdlog::info("connection {} ({}): plain text on a TLS listener, answered and closed", id_, peer_);
    CloseSocket();
    co_return;
  }
  auto [ec] =
      co_await tls_->stream.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    // A client that speaks no TLS, an old protocol, or (mutual TLS) shows no certificate the CA signed.
    state_->metrics.RecordRejected("tls_handshake");
    spdlog::info("connection {} ({}): TLS handshake failed: {}", id_, peer_, ec.message());
    CloseSocket();
    co_return;
  }
  if (std::optional<std::string> subject = net::VerifiedClientSubject(tls_->stream.native_handle())) {
    transport_peer_ = net::PeerOfTransport(state_->options.identity, net::Transport{false, subject});
    spdlog::debug("connection {} ({}): client certificate {} ({})", id_, peer_, *subject,
                  transport_peer_ ? "it is " + (*transport_peer_)->Name() : transport_peer_.error().message);
  }
  co_await ReadLoop();
}

void Connection::Drain() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->draining_ = true;
    self->CloseIfDone();
  });
}

void Connection::Notify(std::string line) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), line = std::move(line)]() mutable {
    if (self->Known() && !self->closed_) self->Send(std::move(line));
  });
}

void Connection::CancelAll(std::string reason) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), reason = std::move(reason)] {
    for (auto& [key, flight] : self->in_flight_) flight->Cancel(reason);
  });
}

void Connection::Abort(std::string reason) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(), reason = std::move(reason)] {
    if (self->closed_) return;
    if (!self->in_flight_.empty()) {
      spdlog::info("connection {} closed ({}): cancelling {} invocation(s) in flight", self->id_, reason,
                   self->in_flight_.size());
    } else {
      spdlog::debug("connection {} closed ({})", self->id_, reason);
    }
    for (auto& [key, flight] : self->in_flight_) flight->Cancel();
    self->write_queue_.clear();
    self->queued_bytes_ = 0;
    self->CloseSocket();
  });
}

asio::awaitable<void> Connection::ReadLoop() {
  auto self = shared_from_this();
  boost::system::error_code ec;
  while (!closed_) {
    auto [read_ec, n] =
        tls_ ? co_await tls_->stream.async_read_some(asio::buffer(read_buffer_), asio::as_tuple(asio::use_awaitable))
             : co_await socket_.async_read_some(asio::buffer(read_buffer_), asio::as_tuple(asio::use_awaitable));
    if (read_ec) {
      ec = read_ec;
      break;
    }
    last_activity_ = state_->clock.Now();
    framer_.Feed(
        std::string_view(read_buffer_.data(), n),
        [this](std::string_view line) {
          if (closed_ || line.find_first_not_of(" \t") == std::string_view::npos) return;
          try {
            HandleLine(line);
          } catch (const std::exception& e) {
            // A bug must cost this line its answer's content, not the connection.
            spdlog::error("connection {}: internal error on a request: {}", id_, e.what());
            Send(CompactJson(ErrorAnswer(nullptr, kInternalError, "Internal error while reading the request")));
          }
        },
        [this] {
          state_->metrics.RecordRejected("line_too_long");
          const auto limit = state_->options.limits.max_line_bytes;
          Send(CompactJson(ErrorAnswer(nullptr, kInvalidRequest,
                                       "Invalid Request: line longer than the " + std::to_string(limit) +
                                           "-byte limit; it was skipped up to the next newline",
                                       json::object{{"max_line_bytes", limit}})));
        });
  }
  read_done_ = true;
  if (closed_) co_return;
  if (ec != asio::error::eof) {
    Abort("read failed: " + ec.message());
  } else if (!is_unix_ || PeerHungUp(socket_.native_handle())) {
    // TCP cannot tell a closed client from one that only shut down its
    // sending half, so an EOF there is a disconnect; a Unix socket can tell.
    Abort("client disconnected");
  } else {
    CloseIfDone();  // a half-close: answer what is in flight, then close
  }
}

asio::awaitable<void> Connection::IdleWatch() {
  auto self = shared_from_this();
  const auto idle = state_->options.limits.idle_timeout;
  while (!closed_) {
    idle_timer_.expires_at(last_activity_ + idle);
    co_await idle_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (closed_) co_return;
    if (state_->clock.Now() < last_activity_ + idle) continue;
    if (writing_ && state_->clock.Now() - last_write_progress_ >= idle) {
      Abort("the client has not read its answers for " + std::to_string(idle.count()) + " ms");
      co_return;
    }
    if (!in_flight_.empty() || writing_) {
      last_activity_ = state_->clock.Now();  // busy is not idle
      continue;
    }
    Abort("idle for " + std::to_string(idle.count()) + " ms");
  }
}

asio::awaitable<void> Connection::WriteLoop() {
  auto self = shared_from_this();
  std::vector<std::string> batch;
  std::vector<asio::const_buffer> buffers;
  while (!write_queue_.empty() && !closed_) {
    batch.clear();
    buffers.clear();
    while (!write_queue_.empty() && batch.size() < 256) {
      batch.push_back(std::move(write_queue_.front()));
      write_queue_.pop_front();
    }
    for (const auto& line : batch) buffers.push_back(asio::buffer(line));
    auto [ec, n] = tls_ ? co_await asio::async_write(tls_->stream, buffers, asio::as_tuple(asio::use_awaitable))
                        : co_await asio::async_write(socket_, buffers, asio::as_tuple(asio::use_awaitable));
    if (closed_) break;
    queued_bytes_ -= std::min(queued_bytes_, n);
    last_write_progress_ = state_->clock.Now();
    if (ec) {
      writing_ = false;
      Abort("write failed: " + ec.message());
      co_return;
    }
    last_activity_ = state_->clock.Now();
  }
  writing_ = false;
  CloseIfDone();
}

void Connection::Send(std::string line) {
  if (closed_) return;
  line.push_back('\n');
  queued_bytes_ += line.size();
  if (queued_bytes_ > state_->options.limits.max_write_queue_bytes) {
    state_->metrics.RecordRejected("slow_reader");
    Abort("the client does not read its answers: more than " +
          std::to_string(state_->options.limits.max_write_queue_bytes) + " bytes queued");
    return;
  }
  write_queue_.push_back(std::move(line));
  if (!writing_) {
    writing_ = true;
    last_write_progress_ = state_->clock.Now();
    asio::co_spawn(socket_.get_executor(), WriteLoop(), [self = shared_from_this()](std::exception_ptr e) {
      if (e) self->Abort("internal error while writing");
    });
  }
}

void Connection::CloseIfDone() {
  if (closed_) return;
  if ((read_done_ || draining_) && in_flight_.empty() && write_queue_.empty() && !writing_) {
    CloseSocket();
  }
}

void Connection::CloseSocket() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  state_->metrics.AddConnections(-1);
  spdlog::debug("connection {} closed", id_);
  state_->RemoveConnection(id_);
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

std::expected<net::Peer, net::Refusal> Connection::Caller(const Call& call) const {
  if (call.auth.empty() && session_peer_) return *session_peer_;
  return net::Identify(state_->options.identity, transport_peer_, call.auth);
}

void Connection::Authenticate(const Call& call, const Reply& reply) {
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
  spdlog::warn("connection {} ({}): auth failed: {}", id_, peer_, who.error().message);
  Answer(reply, UnauthorizedAnswer(call.id, who.error().message));
  // Guessing costs a reconnect every few tries.
  if (who.error().kind == net::Refusal::Kind::kWrongToken && ++failed_auth_ >= kMaxFailedAuth) {
    Abort("too many failed auth attempts");
  }
}

void Connection::HandleCall(Call call, Reply reply) {
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
    // Inline when already on the connection's strand (the invocation runs
    // there): queued behind the answer, a reset and a retry's partials would
    // reach the client after it.
    asio::dispatch(executor, [weak, line = std::move(line)]() mutable {
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
        self->state_->metrics.RecordInvocation(flight->skill, done->outcome, done->metrics, done->seconds,
                                               done->review ? &*done->review : nullptr);
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
                               CallerQuota{tenant, state_->options.quotas}, flight->cancel_reason),
                 asio::bind_cancellation_slot(flight->signal->slot(), std::move(on_done)));
}

}  // namespace skillrunner::server
