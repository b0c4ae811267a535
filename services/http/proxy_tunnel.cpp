#include "services/http/proxy_tunnel.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "services/http/http_error.h"

namespace skillrunner::http {

namespace asio = boost::asio;
namespace beast_http = boost::beast::http;

asio::awaitable<std::expected<void, HttpError>> OpenTunnel(Connection& connection, const ParsedUrl& target,
                                                           const ParsedUrl& proxy) {
  std::string authority = target.Authority();
  std::string where = "proxy " + proxy.Authority();
  beast_http::request<beast_http::empty_body> request(beast_http::verb::connect, authority, 11);
  request.set(beast_http::field::host, authority);
  auto [write_ec, written] =
      co_await beast_http::async_write(connection.socket(), request, asio::as_tuple(asio::use_awaitable));
  (void)written;
  if (write_ec == asio::error::operation_aborted) co_return Cancelled();
  if (write_ec) {
    co_return Fail(HttpErrorKind::kConnect, "CONNECT through " + where + " failed: " + write_ec.message());
  }
  beast_http::response_parser<beast_http::empty_body> parser;
  parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel follows
  auto [read_ec, read] = co_await beast_http::async_read_header(connection.socket(), connection.buffer(), parser,
                                                                asio::as_tuple(asio::use_awaitable));
  (void)read;
  if (read_ec == asio::error::operation_aborted) co_return Cancelled();
  if (read_ec) {
    co_return Fail(HttpErrorKind::kConnect, "CONNECT through " + where + " failed: " + read_ec.message());
  }
  unsigned status = parser.get().result_int();
  if (status < 200 || status > 299) {
    co_return Fail(HttpErrorKind::kConnect,
                   where + " refused CONNECT to " + authority + ": HTTP " + std::to_string(status));
  }
  if (connection.buffer().size() != 0) {
    co_return Fail(HttpErrorKind::kProtocol, where + " sent data before the TLS handshake through its tunnel");
  }
  co_return std::expected<void, HttpError>{};
}

}  // namespace skillrunner::http
