// One connection of the Streamable HTTP door: its requests, each to its answer.
#include <spdlog/spdlog.h>

#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/json/parse.hpp>
#include <boost/url/parse.hpp>
#include <variant>

#include "runner/mcp/mcp_http_state.h"
#include "runner/mcp/mcp_tools.h"
#include "runner/net/http_server.h"
#include "runner/net/peer.h"
#include "runner/server/json_rpc.h"
#include "services/common/json_text.h"

namespace skillrunner::mcp {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

using Request = net::HttpRequest;
using Plain = net::HttpResponse;
constexpr std::chrono::seconds kKeepAliveEvery{15};  // a comment on an idle GET stream
constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";

// An answer without a body (202 to a notification, 200 to DELETE). A function, not a braced
// temporary at the call: GCC 12 freed a braced aggregate passed straight to a coroutine twice.
Plain Bodiless(int status) {
  Plain plain;
  plain.status = status;
  return plain;
}

// An HTTP-level refusal with a JSON-RPC error body (id null), as the MCP SDKs answer them.
Plain Refusal(int status, int code, std::string message) {
  return Plain::Json(status, CompactJson(server::ErrorAnswer(nullptr, code, message)) + "\n");
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
  std::string_view header = request.Header("Authorization");
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
    Plain refused = Refusal(401, -32001, "Unauthorized: a valid bearer token is required");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    return refused;
  }
  return Refusal(403, -32001, "Forbidden: " + refusal.message);
}

// Refusals that come before any session: the path, the Origin, the token, the method.
std::optional<Plain> Screen(const HttpOptions& options, const net::HttpExchange& exchange,
                            std::optional<std::string>& caller) {
  const Request& request = exchange.request();
  if (request.Path() != "/mcp") {
    Plain missing = Bodiless(404);
    missing.body = "only /mcp is served here\n";
    missing.content_type = "text/plain";
    return missing;
  }
  if (request.Has("Origin") && !LoopbackOrigin(request.Header("Origin"))) {
    return Refusal(403, server::kInvalidRequest,
                   "Forbidden: Origin " + std::string(request.Header("Origin")) + " is not a loopback origin");
  }
  auto who = net::Identify(options.identity, exchange.peer(), BearerToken(request));
  if (!who) return Unauthorized(who.error());
  caller = who->tenant;
  const std::string& verb = request.method;
  if (verb != "POST" && verb != "GET" && verb != "DELETE") {
    Plain refused = Refusal(405, server::kInvalidRequest, "Method Not Allowed");
    refused.headers.emplace_back("Allow", "GET, POST, DELETE");
    return refused;
  }
  return std::nullopt;
}

// An SSE stream: the header, then each event as a chunk; `session_id` named when not empty.
class EventStream {
 public:
  explicit EventStream(net::HttpExchange& exchange) : exchange_(exchange) {}
  asio::awaitable<bool> Start(const std::string& session_id) {
    Plain head;
    head.content_type = "text/event-stream";
    head.headers.emplace_back("Cache-Control", "no-cache");
    if (!session_id.empty()) head.headers.emplace_back(std::string(kSessionHeader), session_id);
    const bool started = co_await exchange_.StartChunks(head);
    co_return started;
  }
  // `text` outlives the write (a literal, or a variable of the caller's).
  asio::awaitable<bool> Send(std::string_view text) {
    const bool sent = co_await exchange_.Chunk(text);
    co_return sent;
  }
  asio::awaitable<bool> Event(const json::object& message) {
    std::string text = "event: message\ndata: " + CompactJson(message) + "\n\n";
    const bool sent = co_await Send(text);
    co_return sent;
  }
  asio::awaitable<bool> End() {
    const bool kept = co_await exchange_.EndChunks();
    co_return kept;
  }

 private:
  net::HttpExchange& exchange_;
};

// The session a request names in Mcp-Session-Id (opened by the same caller), or the refusal.
std::variant<std::shared_ptr<Session>, Plain> NamedSession(HttpDoor::State& state, const Request& request,
                                                           const std::string& caller, std::string& id) {
  if (!request.Has(kSessionHeader)) {
    return Refusal(400, server::kInvalidRequest,
                   "Bad Request: the Mcp-Session-Id header is required (initialize opens a session)");
  }
  id = std::string(request.Header(kSessionHeader));
  auto session = state.Find(id, caller);
  if (!session) {
    return Refusal(404, server::kInvalidRequest,
                   "Not Found: no MCP session " + id + " (ended, or never opened; initialize again)");
  }
  if (request.Has(kVersionHeader)) {
    std::string_view asked = request.Header(kVersionHeader);
    if (NegotiatedVersion(asked) != asked) {
      return Refusal(400, server::kInvalidRequest,
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
asio::awaitable<bool> StreamAnswer(net::HttpExchange& exchange, Mailbox& mailbox, const std::string& session_id) {
  EventStream events(exchange);
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
  posted.message = json::parse(request.body, ec, {}, limits);
  if (ec) {
    posted.refusal = Refusal(400, server::kParseError, "Parse error: " + ec.message());
    return posted;
  }
  if (!posted.message.is_object()) {
    posted.refusal = Refusal(400, server::kInvalidRequest, "Invalid Request: one JSON-RPC message object per POST");
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
    posted.refusal = Refusal(503, server::kInvalidRequest,
                             state.draining ? "Service Unavailable: the server is shutting down"
                                            : "Service Unavailable: too many MCP sessions");
    return posted;
  }
  posted.id = *opened;
  posted.session = state.Find(posted.id, caller);
  return posted;
}

asio::awaitable<void> Post(HttpDoor::State& state, net::HttpExchange& exchange, const std::string& caller) {
  const Request& request = exchange.request();
  PostedMessage posted = ReadPost(state, request, caller);
  Plain plain = posted.refusal ? std::move(*posted.refusal) : Bodiless(202);
  if (!posted.refusal && !IsRequest(posted.message)) {
    posted.session->Handle(std::move(posted.message), [](json::object) {});
  } else if (!posted.refusal) {
    const bool progress = WantsProgress(posted.message);
    auto mailbox = std::make_shared<Mailbox>(exchange.executor());
    posted.session->Handle(std::move(posted.message), [mailbox](json::object m) { mailbox->Push(std::move(m)); });
    if (progress) {
      const std::string named_id = posted.initialize ? posted.id : std::string();
      co_await StreamAnswer(exchange, *mailbox, named_id);
      co_return;
    }
    json::object answer = co_await AnswerOf(*mailbox);
    if (!answer.empty()) {  // empty: the call was cancelled, and MCP answers nothing
      plain.status = 200;
      plain.body = CompactJson(answer) + "\n";
      plain.content_type = "application/json";
      if (posted.initialize) plain.headers.emplace_back(std::string(kSessionHeader), posted.id);
    }
  }
  co_await exchange.Answer(plain);
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
asio::awaitable<void> Get(HttpDoor::State& state, net::HttpExchange& exchange, const std::string& caller) {
  const Request& request = exchange.request();
  Named named = ReadNamed(state, request, caller);
  auto mailbox = std::make_shared<Mailbox>(exchange.executor());
  Plain plain = named.refusal ? std::move(*named.refusal) : Bodiless(200);
  if (request.Header("Accept").find("text/event-stream") == std::string_view::npos) {
    plain = Refusal(405, server::kInvalidRequest,
                    "Method Not Allowed: GET /mcp is an SSE stream (Accept: text/event-stream)");
    plain.headers.emplace_back("Allow", "GET, POST, DELETE");
  } else if (!named.refusal && !state.AttachStream(named.id, mailbox)) {
    plain = Refusal(409, server::kInvalidRequest, "Conflict: this session's GET stream is already open");
  } else if (!named.refusal) {
    named.session->SetNotifications([mailbox](json::object m) { mailbox->Push(std::move(m)); });
    EventStream events(exchange);
    co_await Notifications(events, *mailbox);
    state.DetachStream(named.id, mailbox);
    co_return;
  }
  co_await exchange.Answer(plain);
}

asio::awaitable<void> Delete(HttpDoor::State& state, net::HttpExchange& exchange, const std::string& caller) {
  Named named = ReadNamed(state, exchange.request(), caller);
  Plain plain = named.refusal ? std::move(*named.refusal) : Bodiless(200);
  if (!named.refusal) state.Erase(named.id);
  co_await exchange.Answer(plain);
}

asio::awaitable<void> Exchange(std::shared_ptr<HttpDoor::State> state, net::HttpExchange& exchange) {
  std::optional<std::string> caller;
  std::optional<Plain> refused = Screen(state->options, exchange, caller);
  const std::string& method = exchange.request().method;
  if (refused) {
    co_await exchange.Answer(*refused);
  } else if (method == "POST") {
    co_await Post(*state, exchange, *caller);
  } else if (method == "GET") {
    co_await Get(*state, exchange, *caller);
  } else {
    co_await Delete(*state, exchange, *caller);
  }
}

asio::awaitable<void> ExchangeWhileOpen(std::weak_ptr<HttpDoor::State> weak, net::HttpExchange& exchange) {
  auto state = weak.lock();
  if (!state) {
    Plain gone = Refusal(503, server::kInvalidRequest, "Service Unavailable: the server is shutting down");
    co_await exchange.Answer(gone);
    co_return;
  }
  co_await Exchange(std::move(state), exchange);
}

}  // namespace

net::HttpHandler ExchangeHandler(std::weak_ptr<HttpDoor::State> weak) {
  return [weak](net::HttpExchange& exchange) { return ExchangeWhileOpen(weak, exchange); };
}

net::HttpServerOptions DoorHttpOptions(const HttpOptions& options) {
  net::HttpServerOptions http;
  http.name = "mcp";
  http.tls = options.tls;
  http.identity = options.identity;
  http.header_limit = 16 * 1024;
  http.body_limit = options.max_body_bytes;
  http.idle_timeout = options.idle_timeout;
  http.headers.emplace_back("Server", "skillrunner");
  http.too_large = [](std::size_t limit) {
    return Refusal(413, server::kInvalidRequest,
                   "Payload Too Large: a message over " + std::to_string(limit) + " bytes");
  };
  return http;
}

}  // namespace skillrunner::mcp
