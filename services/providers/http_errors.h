#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/common/clock.h"
#include "services/http/http_client.h"
#include "services/providers/chat_stream.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

// The server's requested delay: `retry-after-ms` (milliseconds), else
// `retry-after` as seconds (fractions allowed) or as an HTTP date: that date
// minus the response's `Date` header (else `now`), rounded up to whole
// seconds. Negative or unparsable values are ignored (docs/development/providers-notes.md §5).
std::optional<std::chrono::milliseconds> ParseRetryAfter(
    const http::HttpResponse& response, std::chrono::system_clock::time_point now = RealClock().WallNow());

// 408, 409, 429 and every 5xx (529 included) are transient (design.md §5.2).
bool IsTransientStatus(int status);

// Fills the transport-level facts of an HTTP error answer: status, retryable,
// retry_after, x-should-retry, raw body. The provider parses its own body.
ProviderError ErrorFromStatus(const http::HttpResponse& response);

// A request that got no HTTP answer: connection failures and timeouts are
// transient; TLS failures, bad URLs and oversized answers are not.
ProviderError ErrorFromTransport(const http::HttpError& error);

// `text` with every occurrence of `secret` and anything shaped like an API
// key (sk-..., sk-ant-...), a Google access token (ya29....) or a PEM private key replaced, so provider messages that
// echo a key (even masked) never reach a log or an answer.
std::string Redact(std::string_view text, std::string_view secret);
void RedactError(ProviderError& error, std::string_view secret);

// The API key from `api_key_env`, or nothing for a keyless server on
// loopback; a missing key elsewhere is a kConfig error naming the variable.
std::expected<std::optional<std::string>, ProviderError> LookUpKey(
    const std::function<std::optional<std::string>(std::string_view)>& env, const std::string& api_key_env,
    const std::string& provider_name, const std::string& base_url);

// The bytes of a malformed 2xx body kept in its attempt's `raw`.
inline constexpr std::size_t kMalformedBodyKept = 200;

// A 2xx answer whose body cannot be understood: transient (reason malformed_body), its body's
// first kMalformedBodyKept bytes kept; `request_id_header` names the provider's request-id header.
ProviderError ProtocolError(const http::HttpResponse& response, std::string message,
                            std::string_view request_id_header);

// What one HTTP provider's chat call is made of: where it goes, its own
// headers, where the API key goes, and how its answers and errors read.
struct ChatCall {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string key_header;  // the key is sent as key_prefix + key
  std::string key_prefix;
  ProviderError (*parse_error)(const http::HttpResponse&) = nullptr;
  std::expected<ChatResponse, ProviderError> (*parse_answer)(const http::HttpResponse&, const ChatRequest&) = nullptr;
  // Set when the request asks for a stream: the body is read through it (an
  // answer that is not text/event-stream still goes to parse_answer).
  std::unique_ptr<ChatStream> stream = nullptr;
  // The content type of a streamed answer (Bedrock's binary event stream is not SSE).
  std::string stream_type = "text/event-stream";
  // Cloud providers (Bedrock's SigV4, Vertex AI's OAuth2 token): called with the whole request just
  // before it goes out, to add what proves who sends it; it answers the secrets it used (redacted
  // from any error), or an error that ends the call unsent. When set, no API key is looked up.
  std::function<boost::asio::awaitable<std::expected<std::vector<std::string>, ProviderError>>(http::HttpRequest&)>
      sign = nullptr;
};

// Where the key of a provider comes from (LookUpKey).
struct KeySource {
  const std::function<std::optional<std::string>(std::string_view)>& env;
  const std::string& api_key_env;
  const std::string& provider_name;
  const std::string& base_url;
};

// Looks the key up, POSTs `body` as JSON (content-type, accept and user-agent
// set here, after the provider's own headers) within request.timeout, and maps
// every failure to a ProviderError: no answer -> ErrorFromTransport; a non-2xx
// answer -> call.parse_error, with the key redacted from it; a 2xx answer ->
// call.parse_answer (call.stream's Finish for an event stream).
boost::asio::awaitable<std::expected<ChatResponse, ProviderError>> PostChat(http::HttpClient& client,
                                                                            const KeySource& source, ChatCall call,
                                                                            std::string body,
                                                                            const ChatRequest& request);

// `base_url` without trailing slashes, then `path`.
std::string JoinUrl(std::string_view base_url, std::string_view path);

// Fields of a provider's JSON answer: the text at `key` (an integer there as
// its digits), else `fallback`; a token count (an integer, or a number that
// should have been one), else 0.
std::string JsonString(const boost::json::object& obj, std::string_view key, std::string fallback = {});
std::int64_t JsonCount(const boost::json::object& obj, std::string_view key);

// `url` with each of `query` appended as a percent-encoded parameter
// ("?api-version=2024-10-21"); unchanged when there are none.
using QueryParams = std::vector<std::pair<std::string, std::string>>;
std::string WithQuery(std::string url, const QueryParams& query);

// True when `url`'s host is 127.0.0.0/8, ::1 or localhost.
bool IsLoopbackUrl(std::string_view url);

}  // namespace skillrunner::providers
