#include "services/http/exchange.h"

#include <boost/algorithm/string/case_conv.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <algorithm>
#include <cctype>

#include "services/http/http_error.h"

namespace skillrunner::http {
namespace {

namespace asio = boost::asio;
namespace beast_http = boost::beast::http;
using boost::system::error_code;
using Request = beast_http::request<beast_http::string_body>;
using ResponseParser = beast_http::response_parser<beast_http::string_body>;

constexpr std::size_t kMaxHeaderBytes = 1024 * 1024;

bool HasLineBreak(std::string_view text) {
  return text.find_first_of("\r\n") != std::string_view::npos;
}

std::expected<Request, HttpError> BuildRequest(const HttpRequest& request, const ParsedUrl& url) {
  Request out;
  out.version(11);
  beast_http::verb verb = beast_http::string_to_verb(request.method);
  if (verb == beast_http::verb::unknown) {
    if (request.method.empty() || HasLineBreak(request.method) ||
        request.method.find(' ') != std::string::npos) {
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
  out.body() = request.body;
  out.keep_alive(true);
  out.prepare_payload();
  return out;
}

// The read failed because the peer went away (as opposed to bad HTTP).
bool IsDisconnect(const error_code& ec) {
  return ec == beast_http::error::end_of_stream || ec == beast_http::error::partial_message ||
         ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
         ec == asio::error::not_connected || ec == asio::ssl::error::stream_truncated;
}

std::string Lower(std::string_view text) { return boost::algorithm::to_lower_copy(std::string(text)); }

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

template <class Stream>
asio::awaitable<ExchangeOutcome> ExchangeOn(Stream& stream, Connection& connection,
                                            const HttpRequest& request, const ParsedUrl& url,
                                            std::size_t max_response_bytes) {
  ExchangeOutcome outcome{.response = HttpResponse{}};
  auto message = BuildRequest(request, url);
  if (!message) {
    outcome.response = std::unexpected(std::move(message.error()));
    co_return outcome;
  }
  auto [write_ec, written] =
      co_await beast_http::async_write(stream, *message, asio::as_tuple(asio::use_awaitable));
  (void)written;
  if (write_ec) {
    outcome.nothing_received = true;
    outcome.response = write_ec == asio::error::operation_aborted
                           ? Cancelled()
                           : Fail(HttpErrorKind::kDropped,
                                  "sending the request failed: " + write_ec.message());
    co_return outcome;
  }
  ResponseParser parser;
  parser.body_limit(max_response_bytes);
  parser.header_limit(static_cast<std::uint32_t>(std::min(kMaxHeaderBytes, max_response_bytes)));
  if (message->method() == beast_http::verb::head) parser.skip(true);
  auto [read_ec, read] = co_await beast_http::async_read(stream, connection.buffer(), parser,
                                                         asio::as_tuple(asio::use_awaitable));
  (void)read;
  if (read_ec) {
    outcome.nothing_received = !parser.got_some() && connection.buffer().size() == 0;
    if (read_ec == asio::error::operation_aborted) {
      outcome.response = Cancelled();
    } else if (read_ec == beast_http::error::body_limit ||
               read_ec == beast_http::error::header_limit) {
      outcome.response = Fail(HttpErrorKind::kTooLarge,
                              "response exceeds " + std::to_string(max_response_bytes) + " bytes");
    } else if (IsDisconnect(read_ec)) {
      outcome.response =
          Fail(HttpErrorKind::kDropped, "connection closed before the response was complete");
    } else {
      outcome.response =
          Fail(HttpErrorKind::kProtocol, "invalid HTTP response: " + read_ec.message());
    }
    co_return outcome;
  }
  auto& response = parser.get();
  outcome.keep_alive =
      response.keep_alive() && !parser.need_eof() && connection.buffer().size() == 0;
  outcome.response = ToResponse(parser.release());
  co_return outcome;
}

}  // namespace

asio::awaitable<ExchangeOutcome> Exchange(Connection& connection, const HttpRequest& request,
                                          const ParsedUrl& url, std::size_t max_response_bytes) {
  if (connection.is_tls()) {
    co_return co_await ExchangeOn(connection.tls(), connection, request, url, max_response_bytes);
  }
  co_return co_await ExchangeOn(connection.socket(), connection, request, url,
                                max_response_bytes);
}

}  // namespace skillrunner::http
