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
#include "runner/server/json_rpc.h"
#include "runner/server/token.h"
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

// An HTTP-level refusal with a JSON-RPC error body (id null), as the MCP SDKs answer them.
Plain Refusal(http::status status, int code, std::string message) {
  return Plain{status, CompactJson(server::ErrorAnswer(nullptr, code, message)) + "\n", "application/json", {}};
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

// Who the request's bearer token says it is: "" (the admin, or nobody asked), a tenant's name, or nullopt.
std::optional<std::string> Caller(const HttpOptions& options, const Request& request) {
  if (options.token.empty() && options.tenants.empty()) return std::string();
  std::string_view header = request[http::field::authorization];
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || !boost::algorithm::iequals(header.substr(0, kBearer.size()), kBearer)) {
    return std::nullopt;
  }
  std::string_view given = header.substr(kBearer.size());
  if (!options.token.empty() && server::TokensEqual(given, options.token)) return std::string();
  for (const auto& tenant : options.tenants) {
    if (server::TokensEqual(given, tenant.token)) return tenant.name;
  }
  return std::nullopt;
}

// Refusals that come before any session: the path, the Origin, the token, the method.
std::optional<Plain> Screen(const HttpOptions& options, const Request& request, std::optional<std::string>& caller) {
  std::string_view target = request.target();
  if (auto query = target.find('?'); query != std::string_view::npos) target = target.substr(0, query);
  if (target != "/mcp") return Plain{http::status::not_found, "only /mcp is served here\n", "text/plain", {}};
  if (auto origin = request.find(http::field::origin); origin != request.end() && !LoopbackOrigin(origin->value())) {
    return Refusal(http::status::forbidden, server::kInvalidRequest,
                   "Forbidden: Origin " + std::string(origin->value()) + " is not a loopback origin");
  }
  caller = Caller(options, request);
  if (!caller) {
    Plain refused = Refusal(http::status::unauthorized, -32001, "Unauthorized: a valid bearer token is required");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    return refused;
  }
  const http::verb verb = request.method();
  if (verb != http::verb::post && verb != http::verb::get && verb != http::verb::delete_) {
    Plain refused = Refusal(http::status::method_not_allowed, server::kInvalidRequest, "Method Not Allowed");
    refused.headers.emplace_back("Allow", "GET, POST, DELETE");
    return refused;
  }
  return std::nullopt;
}

template <class Stream>
asio::awaitable<bool> WritePlain(Stream& stream, const Request& request, Plain plain, bool keep_alive) {
  http::response<http::string_body> response{plain.status, request.version()};
  response.set(http::field::server, "skillrunner");
  if (!plain.body.empty()) response.set(http::field::content_type, plain.type);
  for (auto& [name, value] : plain.headers) response.set(name, value);
  response.body() = std::move(plain.body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  stream.expires_after(kWriteTimeout);
  auto [ec, n] = co_await http::async_write(stream, response, asio::as_tuple(asio::use_awaitable));
  co_return !ec && keep_alive;
}

// An SSE stream: the header, then each event as a chunk; `session_id` named when not empty.
class EventStream {
 public:
  EventStream(beast::tcp_stream& stream, const Request& request) : stream_(stream), request_(request) {}
  asio::awaitable<bool> Start(const std::string& session_id) {
    http::response<http::empty_body> head{http::status::ok, request_.version()};
    head.set(http::field::server, "skillrunner");
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    if (!session_id.empty()) head.set(kSessionHeader, session_id);
    head.chunked(true);
    head.keep_alive(request_.keep_alive());
    http::response_serializer<http::empty_body> serializer{head};
    stream_.expires_after(kWriteTimeout);
    auto [ec, n] = co_await http::async_write_header(stream_, serializer, asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
  asio::awaitable<bool> Send(std::string text) {
    stream_.expires_after(kWriteTimeout);
    auto [ec, n] =
        co_await asio::async_write(stream_, http::make_chunk(asio::buffer(text)), asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
  asio::awaitable<bool> Event(const json::object& message) {
    co_return co_await Send("event: message\ndata: " + CompactJson(message) + "\n\n");
  }
  asio::awaitable<bool> End() {
    stream_.expires_after(kWriteTimeout);
    auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk_last(), asio::as_tuple(asio::use_awaitable));
    co_return !ec && request_.keep_alive();
  }

 private:
  beast::tcp_stream& stream_;
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
asio::awaitable<bool> StreamAnswer(beast::tcp_stream& stream, const Request& request, Mailbox& mailbox,
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
  co_return co_await events.End();
}

asio::awaitable<bool> Post(HttpDoor::State& state, beast::tcp_stream& stream, const Request& request,
                           const std::string& caller) {
  const bool keep = request.keep_alive();
  json::parse_options limits;
  limits.max_depth = state.options.max_depth;
  boost::system::error_code ec;
  json::value message = json::parse(request.body(), ec, {}, limits);
  if (ec)
    co_return co_await WritePlain(
        stream, request, Refusal(http::status::bad_request, server::kParseError, "Parse error: " + ec.message()), keep);
  if (!message.is_object()) {
    co_return co_await WritePlain(stream, request,
                                  Refusal(http::status::bad_request, server::kInvalidRequest,
                                          "Invalid Request: one JSON-RPC message object per POST"),
                                  keep);
  }
  const json::value* method = message.as_object().if_contains("method");
  const bool initialize = IsRequest(message) && method->is_string() && method->get_string() == "initialize";
  std::string id;
  std::shared_ptr<Session> session;
  if (initialize) {
    auto opened = state.draining ? std::nullopt : state.Open(caller);
    if (!opened) {
      co_return co_await WritePlain(stream, request,
                                    Refusal(http::status::service_unavailable, server::kInvalidRequest,
                                            state.draining ? "Service Unavailable: the server is shutting down"
                                                           : "Service Unavailable: too many MCP sessions"),
                                    keep);
    }
    id = *opened;
    session = state.Find(id, caller);
  } else {
    auto named = NamedSession(state, request, caller, id);
    if (auto* refused = std::get_if<Plain>(&named))
      co_return co_await WritePlain(stream, request, std::move(*refused), keep);
    session = std::get<std::shared_ptr<Session>>(named);
  }
  if (!IsRequest(message)) {
    session->Handle(std::move(message), [](json::object) {});
    co_return co_await WritePlain(stream, request, Plain{http::status::accepted, "", "", {}}, keep);
  }
  const bool progress = WantsProgress(message);
  auto mailbox = std::make_shared<Mailbox>(stream.get_executor());
  session->Handle(std::move(message), [mailbox](json::object m) { mailbox->Push(std::move(m)); });
  if (progress) co_return co_await StreamAnswer(stream, request, *mailbox, initialize ? id : std::string());
  json::object answer = co_await AnswerOf(*mailbox);
  if (answer.empty()) co_return co_await WritePlain(stream, request, Plain{http::status::accepted, "", "", {}}, keep);
  Plain plain{http::status::ok, CompactJson(answer) + "\n", "application/json", {}};
  if (initialize) plain.headers.emplace_back(std::string(kSessionHeader), id);
  co_return co_await WritePlain(stream, request, std::move(plain), keep);
}

// The session's own stream: notifications/tools/list_changed, a comment every kKeepAliveEvery.
asio::awaitable<bool> Get(HttpDoor::State& state, beast::tcp_stream& stream, const Request& request,
                          const std::string& caller) {
  const bool keep = request.keep_alive();
  if (request[http::field::accept].find("text/event-stream") == std::string_view::npos) {
    Plain refused = Refusal(http::status::method_not_allowed, server::kInvalidRequest,
                            "Method Not Allowed: GET /mcp is an SSE stream (Accept: text/event-stream)");
    refused.headers.emplace_back("Allow", "GET, POST, DELETE");
    co_return co_await WritePlain(stream, request, std::move(refused), keep);
  }
  std::string id;
  auto named = NamedSession(state, request, caller, id);
  if (auto* refused = std::get_if<Plain>(&named))
    co_return co_await WritePlain(stream, request, std::move(*refused), keep);
  auto session = std::get<std::shared_ptr<Session>>(named);
  auto mailbox = std::make_shared<Mailbox>(stream.get_executor());
  if (!state.AttachStream(id, mailbox)) {
    co_return co_await WritePlain(
        stream, request,
        Refusal(http::status::conflict, server::kInvalidRequest, "Conflict: this session's GET stream is already open"),
        keep);
  }
  session->SetNotifications([mailbox](json::object m) { mailbox->Push(std::move(m)); });
  EventStream events(stream, request);
  bool open = co_await events.Start("");
  while (open) {
    Mailbox::Popped popped = co_await mailbox->Pop(kKeepAliveEvery);
    if (popped.got == Mailbox::Got::kShut) break;
    open = popped.got == Mailbox::Got::kTimeout ? co_await events.Send(": keep-alive\n\n")
                                                : co_await events.Event(popped.message);
  }
  state.DetachStream(id, mailbox);
  co_return open&& co_await events.End();
}

asio::awaitable<bool> Delete(HttpDoor::State& state, beast::tcp_stream& stream, const Request& request,
                             const std::string& caller) {
  std::string id;
  auto named = NamedSession(state, request, caller, id);
  if (auto* refused = std::get_if<Plain>(&named))
    co_return co_await WritePlain(stream, request, std::move(*refused), request.keep_alive());
  state.Erase(id);
  co_return co_await WritePlain(stream, request, Plain{http::status::ok, "", "", {}}, request.keep_alive());
}

asio::awaitable<bool> Exchange(HttpDoor::State& state, beast::tcp_stream& stream, const Request& request) {
  std::optional<std::string> caller;
  if (auto refused = Screen(state.options, request, caller)) {
    co_return co_await WritePlain(stream, request, std::move(*refused), request.keep_alive());
  }
  switch (request.method()) {
    case http::verb::post:
      co_return co_await Post(state, stream, request, *caller);
    case http::verb::get:
      co_return co_await Get(state, stream, request, *caller);
    default:
      co_return co_await Delete(state, stream, request, *caller);
  }
}

}  // namespace

asio::awaitable<void> ServeConnection(std::shared_ptr<HttpDoor::State> state,
                                      std::shared_ptr<beast::tcp_stream> stream) {
  beast::flat_buffer buffer;
  while (!state->closed) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    parser.body_limit(state->options.max_body_bytes);
    stream->expires_after(state->options.idle_timeout);
    auto [ec, n] = co_await http::async_read(*stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    if (ec == http::error::body_limit) {
      Request request;
      request.version(11);
      co_await WritePlain(
          *stream, request,
          Refusal(http::status::payload_too_large, server::kInvalidRequest,
                  "Payload Too Large: a message over " + std::to_string(state->options.max_body_bytes) + " bytes"),
          false);
      break;
    }
    if (ec) break;
    Request request = parser.release();
    if (!co_await Exchange(*state, *stream, request)) break;
  }
  beast::error_code ignored;
  stream->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace skillrunner::mcp
