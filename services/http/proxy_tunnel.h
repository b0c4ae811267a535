#pragma once

// Internal to services/http (includes Asio): never include it from a header
// outside services/http.

#include <boost/asio/awaitable.hpp>
#include <expected>

#include "services/http/connection.h"
#include "services/http/http_url.h"

namespace skillrunner::http {

// Over a TCP connection to `proxy`, asks for a tunnel to `target` with
// `CONNECT host:port HTTP/1.1` and expects a 2xx answer; afterwards the
// socket carries the TLS session with the target. Proxy authentication is
// not supported (a 407 is reported as a refusal).
boost::asio::awaitable<std::expected<void, HttpError>> OpenTunnel(Connection& connection, const ParsedUrl& target,
                                                                  const ParsedUrl& proxy);

}  // namespace skillrunner::http
