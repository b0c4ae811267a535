#pragma once

// Internal to services/http (includes Asio): never include it from a header
// outside services/http.

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <expected>

#include "services/http/connection.h"
#include "services/http/http_client.h"
#include "services/http/http_url.h"

namespace skillrunner::http {

struct ExchangeOutcome {
  std::expected<HttpResponse, HttpError> response;
  // The connection may carry another request.
  bool keep_alive = false;
  // It failed before a single response byte arrived: on a pooled connection
  // that is the keep-alive race (the server closed it while idle).
  bool nothing_received = false;
};

// Writes one request and reads its response on an open connection. The
// response body is capped at max_response_bytes. Per-operation cancellation
// of the calling coroutine ends it with kCancelled.
boost::asio::awaitable<ExchangeOutcome> Exchange(Connection& connection, const HttpRequest& request,
                                                 const ParsedUrl& url, std::size_t max_response_bytes);

}  // namespace skillrunner::http
