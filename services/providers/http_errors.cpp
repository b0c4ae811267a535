#include "services/providers/http_errors.h"

#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <charconv>
#include <cmath>
#include <ctime>
#include <regex>
#include <string>

#include "services/common/utf8.h"

namespace skillrunner::providers {
namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

std::optional<double> ParseNumber(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::chrono::system_clock::time_point> ParseHttpDate(std::string_view text) {
  std::tm tm{};
  std::string copy(text);
  const char* end = strptime(copy.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace

std::optional<milliseconds> ParseRetryAfter(const http::HttpResponse& response,
                                            std::chrono::system_clock::time_point now) {
  if (auto ms = response.Header("retry-after-ms")) {
    if (auto value = ParseNumber(*ms); value && *value >= 0) {
      return milliseconds(static_cast<std::int64_t>(std::llround(*value)));
    }
  }
  auto header = response.Header("retry-after");
  if (!header) return std::nullopt;
  if (auto seconds = ParseNumber(*header)) {
    if (*seconds < 0) return std::nullopt;
    return milliseconds(static_cast<std::int64_t>(std::llround(*seconds * 1000)));
  }
  if (auto date = ParseHttpDate(*header)) {
    // Against the server's own clock when it sent one (a client's clock may be off by seconds), in
    // whole seconds, rounded up: an HTTP date has no finer grain.
    std::optional<std::chrono::system_clock::time_point> sent;
    if (auto stamp = response.Header("date")) sent = ParseHttpDate(*stamp);
    auto delta = std::chrono::ceil<std::chrono::seconds>(*date - sent.value_or(now));
    return delta.count() > 0 ? std::chrono::duration_cast<milliseconds>(delta) : milliseconds(0);
  }
  return std::nullopt;
}

bool IsTransientStatus(int status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

ProviderError ErrorFromStatus(const http::HttpResponse& response) {
  ProviderError error;
  error.kind = ProviderError::Kind::kHttp;
  error.http_status = response.status;
  error.retryable = IsTransientStatus(response.status);
  error.retry_after = ParseRetryAfter(response);
  if (auto should = response.Header("x-should-retry")) {
    if (*should == "true") error.should_retry = true;
    if (*should == "false") error.should_retry = false;
  }
  error.raw_body = response.body;
  error.message = "HTTP " + std::to_string(response.status);
  return error;
}

ProviderError ErrorFromTransport(const http::HttpError& transport) {
  ProviderError error;
  error.message = transport.message;
  switch (transport.kind) {
    case http::HttpErrorKind::kConnect:
    case http::HttpErrorKind::kDropped:
    case http::HttpErrorKind::kProtocol:
      error.kind = ProviderError::Kind::kNetwork;
      error.retryable = true;
      break;
    case http::HttpErrorKind::kTimeout:
      error.kind = ProviderError::Kind::kTimeout;
      error.retryable = true;
      // The HTTP client's "timed out after 400 ms", said of the provider.
      if (error.message.starts_with("timed out after ")) {
        error.message = "no answer within " + error.message.substr(16);
      }
      break;
    case http::HttpErrorKind::kTls:
      error.kind = ProviderError::Kind::kNetwork;
      break;
    case http::HttpErrorKind::kTooLarge:
      error.kind = ProviderError::Kind::kProtocol;
      break;
    case http::HttpErrorKind::kInvalidUrl:
      error.kind = ProviderError::Kind::kConfig;
      break;
    case http::HttpErrorKind::kCancelled:
      error.kind = ProviderError::Kind::kCancelled;
      break;
  }
  return error;
}

std::string Redact(std::string_view text, std::string_view secret) {
  std::string out(text);
  if (secret.size() >= 4) {
    for (std::size_t at; (at = out.find(secret)) != std::string::npos;) {
      out.replace(at, secret.size(), "[redacted]");
    }
  }
  static const std::regex kKeyShape("sk-[A-Za-z0-9_*.\\-]{3,}");
  static const std::regex kGoogleToken("ya29\\.[A-Za-z0-9_.\\-]+");
  static const std::regex kPrivateKey("-----BEGIN ([A-Z ]*)PRIVATE KEY-----[^-]*(-----END [A-Z ]*PRIVATE KEY-----)?");
  out = std::regex_replace(out, kKeyShape, "sk-[redacted]");
  out = std::regex_replace(out, kGoogleToken, "ya29.[redacted]");
  return std::regex_replace(out, kPrivateKey, "[redacted private key]");
}

void RedactError(ProviderError& error, std::string_view secret) {
  error.message = Redact(error.message, secret);
  error.raw_body = Redact(error.raw_body, secret);
}

std::expected<std::optional<std::string>, ProviderError> LookUpKey(
    const std::function<std::optional<std::string>(std::string_view)>& env, const std::string& api_key_env,
    const std::string& provider_name, const std::string& base_url) {
  std::optional<std::string> key = env(api_key_env);
  if (key && !key->empty()) return key;
  if (IsLoopbackUrl(base_url)) return std::nullopt;
  ProviderError error;
  error.kind = ProviderError::Kind::kConfig;
  error.message =
      "the environment variable " + api_key_env + " (the API key of provider \"" + provider_name + "\") is not set";
  return std::unexpected(std::move(error));
}

ProviderError ProtocolError(const http::HttpResponse& response, std::string message,
                            std::string_view request_id_header) {
  ProviderError error;
  error.kind = ProviderError::Kind::kProtocol;
  error.http_status = response.status;
  error.message = std::move(message);
  // Most often a body cut on its way (a proxy, a dropped upstream): transient, tried again within
  // the transient budget. What arrived is kept in part, enough to tell HTML from cut JSON.
  error.retryable = true;
  error.reason = "malformed_body";
  error.raw_body = SanitizeUtf8(TruncateUtf8(response.body, kMalformedBodyKept));
  error.request_id = std::string(response.Header(request_id_header).value_or(""));
  return error;
}

namespace {

// The request of a chat call, everything but how it proves who sends it.
http::HttpRequest ChatHttpRequest(ChatCall& call, std::string body, const ChatRequest& chat) {
  http::HttpRequest request;
  request.url = std::move(call.url);
  request.headers = std::move(call.headers);
  request.body = std::move(body);
  request.timeout = chat.timeout;
  request.method = "POST";
  request.headers.emplace_back("content-type", "application/json");
  request.headers.emplace_back("accept", call.stream ? call.stream_type : "application/json");
  if (call.stream)
    request.on_body = [stream = call.stream.get()](std::string_view bytes) { return stream->Feed(bytes); };
  request.headers.emplace_back("user-agent", "skillrunner/" SKILLRUNNER_VERSION);
  if (!chat.metadata.traceparent.empty()) request.headers.emplace_back("traceparent", chat.metadata.traceparent);
  return request;
}

}  // namespace

boost::asio::awaitable<std::expected<ChatResponse, ProviderError>> PostChat(http::HttpClient& client,
                                                                            const KeySource& source, ChatCall call,
                                                                            std::string body, const ChatRequest& chat) {
  http::HttpRequest request = ChatHttpRequest(call, std::move(body), chat);
  std::vector<std::string> secrets;
  if (call.sign) {
    auto signed_with = co_await call.sign(request);
    if (!signed_with) co_return std::unexpected(std::move(signed_with.error()));
    secrets = std::move(*signed_with);
  } else {
    auto found = LookUpKey(source.env, source.api_key_env, source.provider_name, source.base_url);
    if (!found) co_return std::unexpected(std::move(found.error()));
    if (*found) {
      request.headers.emplace_back(call.key_header, call.key_prefix + **found);
      secrets.push_back(**found);
    }
  }
  auto response = co_await client.Send(std::move(request));
  if (!response) co_return std::unexpected(ErrorFromTransport(response.error()));
  if (response->status < 200 || response->status >= 300) {
    ProviderError error = call.parse_error(*response);
    for (const std::string& secret : secrets) RedactError(error, secret);
    if (secrets.empty()) RedactError(error, "");
    co_return std::unexpected(std::move(error));
  }
  if (call.stream && response->Header("content-type").value_or("").starts_with(call.stream_type)) {
    co_return call.stream->Finish(*response, chat);
  }
  co_return call.parse_answer(*response, chat);
}

std::string JsonString(const json::object& obj, std::string_view key, std::string fallback) {
  auto* v = obj.if_contains(key);
  if (!v) return fallback;
  if (v->is_string()) return std::string(v->as_string());
  if (v->is_int64() || v->is_uint64()) return json::serialize(*v);
  return fallback;
}

std::int64_t JsonCount(const json::object& obj, std::string_view key) {
  auto* v = obj.if_contains(key);
  if (!v) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64() & INT64_MAX);
  if (v->is_double() && v->as_double() >= 0 && v->as_double() < 9e18) return static_cast<std::int64_t>(v->as_double());
  return 0;
}

std::string JoinUrl(std::string_view base_url, std::string_view path) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  return std::string(base_url) + std::string(path);
}

std::string WithQuery(std::string url, const QueryParams& query) {
  if (query.empty()) return url;
  auto parsed = boost::urls::parse_uri_reference(url);
  if (!parsed) return url;  // the config checked the base URL: not reached
  boost::urls::url out(*parsed);
  for (const auto& [key, value] : query) out.params().append({key, value});
  return std::string(out.buffer());
}

bool IsLoopbackUrl(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return false;
  std::string host(parsed->host());
  if (host == "localhost" || host == "[::1]" || host == "::1") return true;
  return host.starts_with("127.");
}

}  // namespace skillrunner::providers
