// One connection of the Streamable HTTP door: its requests, each to its answer.
#include <spdlog/spdlog.h>

#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/url/parse.hpp>
#include <variant>

#include "runner/mcp/mcp_http_state.h"
#include "runner/mcp/mcp_tools.h"
#include "runner/net/peer.h"
#include "runner/net/tls_server.h"
#include "runner/server/json_rpc.h"
#include "services/common/json_text.h"

namespace skillrunner::mcp {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

namespace {

using Request = http::request<http::string_body>;
constexpr std::size_t kMaxHeaderBytes = 16 * 1024;
constexpr std::chrono::seconds kWriteTimeout{30};
constexpr std::chrono::seconds kKeepAliveEvery{15};  // a comment on an idle GET stream
constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";

// A whole answer: status, body (JSON unless `type` says otherwise), extra headers.
struct Plain {
  http::status status = http::status::ok;
  std::string body;
  std::string type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

// An answer without a body (202 to a notification, 200 to DELETE). A function, not a braced
// temporary at the call: GCC 12 freed a braced aggregate passed straight to a coroutine twice.
Plain Bodiless(http::status status) {
  Plain plain;
  plain.status = status;
  plain.type.clear();
  return plain;
}

// An HTTP-level refusal with a JSON-RPC error body (id null), as the MCP SDKs answer them.
Plain Refusal(http::status status, int code, std::string message) {
  Plain plain = Bodiless(status);
  plain.body = CompactJson(server::ErrorAnswer(nullptr, code, message)) + "\n";
  plain.type = "application/json";
  return plain;
}

bool LoopbackOrigin(std::string_view origin) {
  auto url = boost::urls::parse_uri(origin);
  if (!url) return false;
  std::string host(url->host());
  if (host == "localhost") return true;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

// The request's bearer token, or "" when it sends none.
std::string_view BearerToken(const Request& request) {
  std::string_view header = request[http::field::authorization];
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || !boost::algorithm::iequals(header.substr(0, kBearer.size()), kBearer)) {
    return {};
  }
  return header.substr(kBearer.size());
}

// A caller refused (design.md §12.1): 401 asking for a token, 403 for a certificate or a token that
// the rule refuses as it is.
Plain Unauthorized(const net::Refusal& refusal) {
  using Kind = net::Refusal::Kind;
  if (refusal.kind == Kind::kNoToken || refusal.kind == Kind::kWrongToken) {
    Plain refused = Refusal(http::status::unauthorized, -32001, "Unauthorized: a valid bearer token is required");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    return refused;
  }
  return Refusal(http::status::forbidden, -32001, "Forbidden: " + refusal.message);
}

// Refusals that come before any session: the path, the Origin, the token, the method.
std::optional<Plain> Screen(const HttpOptions& options, const McpStream& stream, const Request& request,
                            std::optional<std::string>& caller) {
  std::string_view target = request.target();
  if (auto query = target.find('?'); query != std::string_view::npos) target = target.substr(0, query);
  if (target != "/mcp") {
    Plain missing = Bodiless(http::status::not_found);
    missing.body = "only /mcp is served here\n";
    missing.type = "text/plain";
    return missing;
  }
  if (auto origin = request.find(http::field::origin); origin != request.end() && !LoopbackOrigin(origin->value())) {
    return Refusal(http::status::forbidden, server::kInvalidRequest,
                   "Forbidden: Origin " + std::string(origin->value()) + " is not a loopback origin");
  }
  auto who = net::Identify(options.identity, stream.peer, BearerToken(request));
  if (!who) return Unauthorized(who.error());
  caller = who->tenant;
  const http::verb verb = request.method();
  if (verb != http::verb::post && verb != http::verb::get && verb != http::verb::delete_) {
    Plain refused = Refusal(http::status::method_not_allowed, server::kInvalidRequest, "Method Not Allowed");
    refused.headers.emplace_back("Allow", "GET, POST, DELETE");
    return refused;
  }
  return std::nullopt;
}

// Writes `plain` (a variable of the caller's frame: GCC 12 destroyed temporaries handed straight to
// a coroutine twice, so every answer is a named variable and every call a plain statement).
asio::awaitable<bool> WritePlain(McpStream& stream, const Request& request, Plain& plain, bool keep_alive) {
  http::response<http::string_body> response{plain.status, request.version()};
  response.set(http::field::server, "skillrunner");
  if (!plain.body.empty()) response.set(http::field::content_type, plain.type);
  for (auto& [name, value] : plain.headers) response.set(name, value);
  response.body() = std::move(plain.body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  stream.tcp.expires_after(kWriteTimeout);
  auto [ec, n] = stream.tls ? co_await http::async_write(*stream.tls, response, asio::as_tuple(asio::use_awaitable))
                            : co_await http::async_write(stream.tcp, response, asio::as_tuple(asio::use_awaitable));
  const bool kept = !ec && keep_alive;
  co_return kept;
}

// An SSE stream: the header, then each event as a chunk; `session_id` named when not empty.
class EventStream {
 public:
  EventStream(McpStream& stream, const Request& request) : stream_(stream), request_(request) {}
  asio::awaitable<bool> Start(const std::string& session_id) {
    http::response<http::empty_body> head{http::status::ok, request_.version()};
    head.set(http::field::server, "skillrunner");
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    if (!session_id.empty()) head.set(kSessionHeader, session_id);
    head.chunked(true);
    head.keep_alive(request_.keep_alive());
    http::response_serializer<http::empty_body> serializer{head};
    stream_.tcp.expires_after(kWriteTimeout);
    auto [ec, n] =
        stream_.tls ? co_await http::async_write_header(*stream_.tls, serializer, asio::as_tuple(asio::use_awaitable))
                    : co_await http::async_write_header(stream_.tcp, serializer, asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
  // `text` outlives the write (a literal, or a variable of the caller's).
  asio::awaitable<bool> Send(std::string_view text) {
    stream_.tcp.expires_after(kWriteTimeout);
    auto chunk = http::make_chunk(asio::buffer(text.data(), text.size()));
    auto [ec, n] = stream_.tls ? co_await asio::async_write(*stream_.tls, chunk, asio::as_tuple(asio::use_awaitable))
                               : co_await asio::async_write(stream_.tcp, chunk, asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
  asio::awaitable<bool> Event(const json::object& message) {
    std::string text = "event: message\ndata: " + CompactJson(message) + "\n\n";
    const bool sent = co_await Send(text);
    co_return sent;
  }
  asio::awaitable<bool> End() {
    stream_.tcp.expires_after(kWriteTimeout);
    auto last = http::make_chunk_last();
    auto [ec, n] = stream_.tls ? co_await asio::async_write(*stream_.tls, last, asio::as_tuple(asio::use_awaitable))
                               : co_await asio::async_write(stream_.tcp, last, asio::as_tuple(asio::use_awaitable));
    co_return !ec && request_.keep_alive();
  }

 private:
  McpStream& stream_;
  const Request& request_;
};

// The session a request names in Mcp-Session-Id (opened by the same caller), or the refusal.
std::variant<std::shared_ptr<Session>, Plain> NamedSession(HttpDoor::State& state, const Request& request,
                                                           const std::string& caller, std::string& id) {
  auto header = request.find(kSessionHeader);
  if (header == request.end()) {
    return Refusal(http::status::bad_request, server::kInvalidRequest,
                   "Bad Request: the Mcp-Session-Id header is required (initialize opens a session)");
  }
  id = std::string(header->value());
  auto session = state.Find(id, caller);
  if (!session) {
    return Refusal(http::status::not_found, server::kInvalidRequest,
                   "Not Found: no MCP session " + id + " (ended, or never opened; initialize again)");
  }
  if (auto version = request.find(kVersionHeader); version != request.end()) {
    std::string_view asked = version->value();
    if (NegotiatedVersion(asked) != asked) {
      return Refusal(http::status::bad_request, server::kInvalidRequest,
                     "Bad Request: unsupported MCP-Protocol-Version " + std::string(asked));
    }
  }
  return session;
}

// Waits for the one answer of a request (nothing more comes for a plain JSON answer).
asio::awaitable<json::object> AnswerOf(Mailbox& mailbox) {
  for (;;) {
    Mailbox::Popped popped = co_await mailbox.Pop(std::chrono::hours(24));
    if (popped.got == Mailbox::Got::kMessage) co_return std::move(popped.message);
    if (popped.got == Mailbox::Got::kShut) co_return json::object{};
  }
}

// A request's progress notifications, then its answer, as SSE.
asio::awaitable<bool> StreamAnswer(McpStream& stream, const Request& request, Mailbox& mailbox,
                                   const std::string& session_id) {
  EventStream events(stream, request);
  if (!co_await events.Start(session_id)) co_return false;
  for (;;) {
    Mailbox::Popped popped = co_await mailbox.Pop(kKeepAliveEvery);
    if (popped.got == Mailbox::Got::kTimeout) {
      if (!co_await events.Send(": keep-alive\n\n")) co_return false;
      continue;
    }
    if (popped.got == Mailbox::Got::kShut || popped.message.empty()) break;
    if (!co_await events.Event(popped.message)) co_return false;
    if (popped.message.contains("id")) break;
  }
  const bool kept = co_await events.End();
  co_return kept;
}

// What a POST is, read before anything waits: a refusal, or the session and its message.
struct PostedMessage {
  std::optional<Plain> refusal;
  std::shared_ptr<Session> session;
  std::string id;  // the session's
  json::value message;
  bool initialize = false;
};

PostedMessage ReadPost(HttpDoor::State& state, const Request& request, const std::string& caller) {
  PostedMessage posted;
  json::parse_options limits;
  limits.max_depth = state.options.max_depth;
  boost::system::error_code ec;
  posted.message = json::parse(request.body(), ec, {}, limits);
  if (ec) {
    posted.refusal = Refusal(http::status::bad_request, server::kParseError, "Parse error: " + ec.message());
    return posted;
  }
  if (!posted.message.is_object()) {
    posted.refusal = Refusal(http::status::bad_request, server::kInvalidRequest,
                             "Invalid Request: one JSON-RPC message object per POST");
    return posted;
  }
  const json::value* method = posted.message.as_object().if_contains("method");
  posted.initialize = IsRequest(posted.message) && method->is_string() && method->get_string() == "initialize";
  if (!posted.initialize) {
    auto named = NamedSession(state, request, caller, posted.id);
    if (auto* refused = std::get_if<Plain>(&named)) {
      posted.refusal = std::move(*refused);
    } else {
      posted.session = std::get<std::shared_ptr<Session>>(named);
    }
    return posted;
  }
  auto opened = state.draining ? std::nullopt : state.Open(caller);
  if (!opened) {
    posted.refusal = Refusal(http::status::service_unavailable, server::kInvalidRequest,
                             state.draining ? "Service Unavailable: the server is shutting down"
                                            : "Service Unavailable: too many MCP sessions");
    return posted;
  }
  posted.id = *opened;
  posted.session = state.Find(posted.id, caller);
  return posted;
}

asio::awaitable<bool> Post(HttpDoor::State& state, McpStream& stream, const Request& request,
                           const std::string& caller) {
  PostedMessage posted = ReadPost(state, request, caller);
  Plain plain = posted.refusal ? std::move(*posted.refusal) : Bodiless(http::status::accepted);
  if (!posted.refusal && !IsRequest(posted.message)) {
    posted.session->Handle(std::move(posted.message), [](json::object) {});
  } else if (!posted.refusal) {
    const bool progress = WantsProgress(posted.message);
    auto mailbox = std::make_shared<Mailbox>(stream.tcp.get_executor());
    posted.session->Handle(std::move(posted.message), [mailbox](json::object m) { mailbox->Push(std::move(m)); });
    if (progress) {
      const std::string named_id = posted.initialize ? posted.id : std::string();
      const bool kept = co_await StreamAnswer(stream, request, *mailbox, named_id);
      co_return kept;
    }
    json::object answer = co_await AnswerOf(*mailbox);
    if (!answer.empty()) {  // empty: the call was cancelled, and MCP answers nothing
      plain.status = http::status::ok;
      plain.body = CompactJson(answer) + "\n";
      plain.type = "application/json";
      if (posted.initialize) plain.headers.emplace_back(std::string(kSessionHeader), posted.id);
    }
  }
  const bool kept = co_await WritePlain(stream, request, plain, request.keep_alive());
  co_return kept;
}

// What a GET or DELETE names: its session, or the refusal.
struct Named {
  std::optional<Plain> refusal;
  std::shared_ptr<Session> session;
  std::string id;
};

Named ReadNamed(HttpDoor::State& state, const Request& request, const std::string& caller) {
  Named named;
  auto found = NamedSession(state, request, caller, named.id);
  if (auto* refused = std::get_if<Plain>(&found)) {
    named.refusal = std::move(*refused);
  } else {
    named.session = std::get<std::shared_ptr<Session>>(found);
  }
  return named;
}

// The events of an open GET stream until the session ends or the client leaves.
asio::awaitable<bool> Notifications(EventStream& events, Mailbox& mailbox) {
  bool open = co_await events.Start("");
  while (open) {
    Mailbox::Popped popped = co_await mailbox.Pop(kKeepAliveEvery);
    if (popped.got == Mailbox::Got::kShut) break;
    if (popped.got == Mailbox::Got::kTimeout) {
      open = co_await events.Send(": keep-alive\n\n");
    } else {
      open = co_await events.Event(popped.message);
    }
  }
  if (open) open = co_await events.End();
  co_return open;
}

// The session's own stream: notifications/tools/list_changed, a comment every kKeepAliveEvery.
asio::awaitable<bool> Get(HttpDoor::State& state, McpStream& stream, const Request& request,
                          const std::string& caller) {
  Named named = ReadNamed(state, request, caller);
  auto mailbox = std::make_shared<Mailbox>(stream.tcp.get_executor());
  Plain plain = named.refusal ? std::move(*named.refusal) : Bodiless(http::status::ok);
  if (request[http::field::accept].find("text/event-stream") == std::string_view::npos) {
    plain = Refusal(http::status::method_not_allowed, server::kInvalidRequest,
                    "Method Not Allowed: GET /mcp is an SSE stream (Accept: text/event-stream)");
    plain.headers.emplace_back("Allow", "GET, POST, DELETE");
  } else if (!named.refusal && !state.AttachStream(named.id, mailbox)) {
    plain =
        Refusal(http::status::conflict, server::kInvalidRequest, "Conflict: this session's GET stream is already open");
  } else if (!named.refusal) {
    named.session->SetNotifications([mailbox](json::object m) { mailbox->Push(std::move(m)); });
    EventStream events(stream, request);
    const bool kept = co_await Notifications(events, *mailbox);
    state.DetachStream(named.id, mailbox);
    co_return kept;
  }
  const bool kept = co_await WritePlain(stream, request, plain, request.keep_alive());
  co_return kept;
}

asio::awaitable<bool> Delete(HttpDoor::State& state, McpStream& stream, const Request& request,
                             const std::string& caller) {
  Named named = ReadNamed(state, request, caller);
  Plain plain = named.refusal ? std::move(*named.refusal) : Bodiless(http::status::ok);
  if (!named.refusal) state.Erase(named.id);
  const bool kept = co_await WritePlain(stream, request, plain, request.keep_alive());
  co_return kept;
}

asio::awaitable<bool> Exchange(HttpDoor::State& state, McpStream& stream, const Request& request) {
  std::optional<std::string> caller;
  std::optional<Plain> refused = Screen(state.options, stream, request, caller);
  bool kept = false;
  if (refused) {
    kept = co_await WritePlain(stream, request, *refused, request.keep_alive());
  } else if (request.method() == http::verb::post) {
    kept = co_await Post(state, stream, request, *caller);
  } else if (request.method() == http::verb::get) {
    kept = co_await Get(state, stream, request, *caller);
  } else {
    kept = co_await Delete(state, stream, request, *caller);
  }
  co_return kept;
}

}  // namespace

asio::awaitable<void> ServeConnection(std::shared_ptr<HttpDoor::State> state,
                                      std::shared_ptr<LiveConnection> connection) {
  McpStream* stream = connection->stream.get();
  beast::flat_buffer buffer;
  std::optional<std::string> subject;
  if (stream->tls) {
    stream->tcp.expires_after(kWriteTimeout);
    auto [ec] =
        co_await stream->tls->async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
    if (ec) {
      spdlog::debug("mcp: TLS handshake failed: {}", ec.message());
      stream->tcp.close();
      co_return;
    }
    subject = net::VerifiedClientSubject(stream->tls->native_handle());
  }
  // design.md §12.1: who the connection is, once; each request's token is checked against it.
  stream->peer = net::PeerOfTransport(state->options.identity, net::Transport{false, std::move(subject)});
  while (!state->closed) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    parser.body_limit(state->options.max_body_bytes);
    stream->tcp.expires_after(state->options.idle_timeout);
    auto [ec, n] = stream->tls
                       ? co_await http::async_read(*stream->tls, buffer, parser, asio::as_tuple(asio::use_awaitable))
                       : co_await http::async_read(stream->tcp, buffer, parser, asio::as_tuple(asio::use_awaitable));
    if (ec == http::error::body_limit) {
      Request request;
      request.version(11);
      Plain refused =
          Refusal(http::status::payload_too_large, server::kInvalidRequest,
                  "Payload Too Large: a message over " + std::to_string(state->options.max_body_bytes) + " bytes");
      co_await WritePlain(*stream, request, refused, false);
      break;
    }
    if (ec) break;
    Request request = parser.release();
    connection->busy = true;
    const bool kept = co_await Exchange(*state, *stream, request);
    connection->busy = false;
    if (!kept) break;
  }
  beast::error_code ignored;
  stream->tcp.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace skillrunner::mcp
