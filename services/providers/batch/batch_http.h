#pragma once

// The HTTP side of the batch APIs: one request with the provider's key and
// headers, every failure a ProviderError (the provider's body parsed, the
// key redacted), and a 2xx answer as it came.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/http/http_client.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

struct BatchEndpoint {
  std::shared_ptr<http::HttpClient> client;
  std::function<std::optional<std::string>(std::string_view)> env;
  std::string api_key_env;
  std::string provider_name;
  std::string base_url;
  std::string key_header;  // the key is sent as key_prefix + key
  std::string key_prefix;
  std::vector<std::pair<std::string, std::string>> headers;  // the provider's own (anthropic-version)
  std::vector<std::pair<std::string, std::string>> query;    // on every URL (Azure's api-version)
  ProviderError (*parse_error)(const http::HttpResponse&) = nullptr;
  std::chrono::milliseconds timeout{300'000};
};

// METHOD base_url + path (with the endpoint's query); `content_type` empty
// for a request without a body.
boost::asio::awaitable<std::expected<http::HttpResponse, ProviderError>> BatchSend(const BatchEndpoint& endpoint,
                                                                                   std::string method, std::string path,
                                                                                   std::string body,
                                                                                   std::string content_type);
// The same without a body (GET). An overload, not default arguments: g++ 12
// moves defaulted class-type arguments bitwise inside coroutines.
boost::asio::awaitable<std::expected<http::HttpResponse, ProviderError>> BatchSend(const BatchEndpoint& endpoint,
                                                                                   std::string method,
                                                                                   std::string path);

// A 2xx body as a JSON object, or a kProtocol error saying what `what` is.
std::expected<boost::json::object, ProviderError> BatchJson(const http::HttpResponse& response, std::string_view what);

}  // namespace skillrunner::providers
