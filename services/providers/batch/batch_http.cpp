#include "services/providers/batch/batch_http.h"

#include <boost/json/parse.hpp>

#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

boost::asio::awaitable<std::expected<http::HttpResponse, ProviderError>> BatchSend(const BatchEndpoint& endpoint,
                                                                                   std::string method, std::string path,
                                                                                   std::string body,
                                                                                   std::string content_type) {
  auto found = LookUpKey(endpoint.env, endpoint.api_key_env, endpoint.provider_name, endpoint.base_url);
  if (!found) co_return std::unexpected(std::move(found.error()));
  const std::optional<std::string>& key = *found;
  http::HttpRequest request;
  request.method = std::move(method);
  request.url = WithQuery(JoinUrl(endpoint.base_url, path), endpoint.query);
  request.headers = endpoint.headers;
  if (key) request.headers.emplace_back(endpoint.key_header, endpoint.key_prefix + *key);
  if (!content_type.empty()) request.headers.emplace_back("content-type", std::move(content_type));
  request.headers.emplace_back("accept", "application/json");
  request.headers.emplace_back("user-agent", "skillrunner/" SKILLRUNNER_VERSION);
  request.body = std::move(body);
  request.timeout = endpoint.timeout;
  auto response = co_await endpoint.client->Send(std::move(request));
  if (!response) co_return std::unexpected(ErrorFromTransport(response.error()));
  if (response->status < 200 || response->status >= 300) {
    ProviderError error = endpoint.parse_error(*response);
    RedactError(error, key.value_or(""));
    co_return std::unexpected(std::move(error));
  }
  co_return std::move(*response);
}

boost::asio::awaitable<std::expected<http::HttpResponse, ProviderError>> BatchSend(const BatchEndpoint& endpoint,
                                                                                   std::string method,
                                                                                   std::string path) {
  return BatchSend(endpoint, std::move(method), std::move(path), std::string(), std::string());
}

std::expected<json::object, ProviderError> BatchJson(const http::HttpResponse& response, std::string_view what) {
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return std::unexpected(ProtocolError(response, std::string(what) + " is not a JSON object", "x-request-id"));
  }
  return std::move(body.as_object());
}

}  // namespace skillrunner::providers
