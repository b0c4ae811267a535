#include "services/http/exchange.h"

#include <boost/algorithm/string/case_conv.hpp>
#include <boost/asio/ssl/error.hpp>
#include <cctype>

#include "services/http/exchange_stream.h"

namespace skillrunner::http {
namespace exchange_detail {

namespace asio = boost::asio;
namespace beast_http = boost::beast::http;
using boost::system::error_code;

namespace {

bool HasLineBreak(std::string_view text) { return text.find_first_of("\r\n") != std::string_view::npos; }

std::string Lower(std::string_view text) { return boost::algorithm::to_lower_copy(std::string(text)); }

}  // namespace

std::expected<Request, HttpError> BuildRequest(const HttpRequest& request, const ParsedUrl& url) {
  Request out;
  out.version(11);
  beast_http::verb verb = beast_http::string_to_verb(request.method);
  if (verb == beast_http::verb::unknown) {
    if (request.method.empty() || HasLineBreak(request.method) || request.method.find(' ') != std::string::npos) {
      return Fail(HttpErrorKind::kProtocol, "invalid HTTP method");
    }
    out.method_string(request.method);
  } else {
    out.method(verb);
  }
  out.target(url.target);
  out.set(beast_http::field::host, url.HostHeader());
  for (const auto& [name, value] : request.headers) {
    // A line break would let a value inject headers; the message names the
    // header only, since values may be secrets.
    if (name.empty() || HasLineBreak(name) || HasLineBreak(value)) {
      return Fail(HttpErrorKind::kProtocol, "header '" + name + "' contains a line break");
    }
    out.insert(name, value);
  }
  out.body() = boost::beast::span<const char>(request.body.data(), request.body.size());
  out.keep_alive(true);
  out.prepare_payload();
  return out;
}

bool IsDisconnect(const error_code& ec) {
  return ec == beast_http::error::end_of_stream || ec == beast_http::error::partial_message || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::connection_aborted ||
         ec == asio::error::broken_pipe || ec == asio::error::not_connected || ec == asio::ssl::error::stream_truncated;
}

HttpResponse ToResponse(beast_http::response<beast_http::string_body>&& message) {
  HttpResponse response;
  response.status = static_cast<int>(message.result_int());
  response.headers.reserve(static_cast<std::size_t>(std::distance(message.begin(), message.end())));
  for (const auto& field : message) {
    response.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
  }
  response.body = std::move(message.body());
  return response;
}

}  // namespace exchange_detail

boost::asio::awaitable<ExchangeOutcome> Exchange(Connection& connection, const HttpRequest& request,
                                                 const ParsedUrl& url, std::size_t max_response_bytes) {
  if (connection.is_tls()) {
    co_return co_await exchange_detail::ExchangeOn(connection.tls(), connection.buffer(), request, url,
                                                   max_response_bytes);
  }
  co_return co_await exchange_detail::ExchangeOn(connection.socket(), connection.buffer(), request, url,
                                                 max_response_bytes);
}

}  // namespace skillrunner::http
