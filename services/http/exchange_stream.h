#pragma once

// Internal to services/http (includes Asio and Beast): one request written
// and its response read on any Beast stream. Exchange runs it on a pooled
// connection's socket or TLS stream; tests/fuzz/http_response_fuzz.cpp on an
// in-memory stream, so that the parser limits fuzzed are the client's own.

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <string_view>

#include "services/http/exchange.h"
#include "services/http/http_error.h"

namespace skillrunner::http::exchange_detail {

// The body points into HttpRequest::body (no copy): the HttpRequest outlives it.
using Request = boost::beast::http::request<boost::beast::http::span_body<const char>>;
using ResponseParser = boost::beast::http::response_parser<boost::beast::http::string_body>;

inline constexpr std::size_t kMaxHeaderBytes = 1024 * 1024;

// The request on the wire; a method or header with a line break is refused.
std::expected<Request, HttpError> BuildRequest(const HttpRequest& request, const ParsedUrl& url);
// The read failed because the peer went away (as opposed to bad HTTP).
bool IsDisconnect(const boost::system::error_code& ec);
// Header names lower-cased.
HttpResponse ToResponse(boost::beast::http::response<boost::beast::http::string_body>&& message);

// The response parser with the client's limits: the body capped at
// max_response_bytes, the header at 1 MiB (or less when the cap is less).
inline void LimitParser(ResponseParser& parser, std::size_t max_response_bytes) {
  parser.body_limit(max_response_bytes);
  parser.header_limit(static_cast<std::uint32_t>(std::min(kMaxHeaderBytes, max_response_bytes)));
}

// Fills `outcome` for a response read that failed with `read_ec`.
inline void ReadFailed(const boost::system::error_code& read_ec, const ResponseParser& parser,
                       const boost::beast::flat_buffer& buffer, std::size_t max_response_bytes,
                       ExchangeOutcome& outcome) {
  namespace beast_http = boost::beast::http;
  outcome.nothing_received = !parser.got_some() && buffer.size() == 0;
  if (read_ec == boost::asio::error::operation_aborted) {
    outcome.response = Cancelled();
  } else if (read_ec == beast_http::error::body_limit || read_ec == beast_http::error::header_limit) {
    outcome.response =
        Fail(HttpErrorKind::kTooLarge, "response exceeds " + std::to_string(max_response_bytes) + " bytes");
  } else if (IsDisconnect(read_ec)) {
    outcome.response = Fail(HttpErrorKind::kDropped, "connection closed before the response was complete");
  } else {
    outcome.response = Fail(HttpErrorKind::kProtocol, "invalid HTTP response: " + read_ec.message());
  }
}

// Fills `outcome` with the whole response `parser` read.
inline void Finished(ResponseParser& parser, const boost::beast::flat_buffer& buffer, ExchangeOutcome& outcome) {
  auto& response = parser.get();
  outcome.keep_alive = response.keep_alive() && !parser.need_eof() && buffer.size() == 0;
  outcome.response = ToResponse(parser.release());
}

// HttpRequest::on_body: the header first; a 2xx body is handed over as it
// arrives, and a `false` from on_body ends the read (the connection is not
// kept, so it closes); any other status is read whole.
template <class Stream>
boost::asio::awaitable<void> ReadStreamed(Stream& stream, boost::beast::flat_buffer& buffer, ResponseParser& parser,
                                          const std::function<bool(std::string_view)>& on_body,
                                          std::size_t max_response_bytes, ExchangeOutcome& outcome) {
  namespace asio = boost::asio;
  namespace beast_http = boost::beast::http;
  auto [header_ec, header_read] =
      co_await beast_http::async_read_header(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
  (void)header_read;
  if (header_ec) {
    ReadFailed(header_ec, parser, buffer, max_response_bytes, outcome);
    co_return;
  }
  const unsigned status = parser.get().result_int();
  const bool streamed = status >= 200 && status < 300;
  std::size_t delivered = 0;
  while (!parser.is_done()) {
    auto [read_ec, read] =
        co_await beast_http::async_read_some(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    (void)read;
    if (read_ec) {
      ReadFailed(read_ec, parser, buffer, max_response_bytes, outcome);
      co_return;
    }
    const std::string& body = parser.get().body();
    if (!streamed || body.size() == delivered) continue;
    const bool more = on_body(std::string_view(body).substr(delivered));
    delivered = body.size();
    if (!more) {
      outcome.keep_alive = false;
      outcome.response = ToResponse(parser.release());
      outcome.response->stopped = true;
      co_return;
    }
  }
  Finished(parser, buffer, outcome);
}

// Writes `request` on `stream` and reads its response, with `buffer` holding
// what the stream read past it (a pooled connection's buffer).
template <class Stream>
boost::asio::awaitable<ExchangeOutcome> ExchangeOn(Stream& stream, boost::beast::flat_buffer& buffer,
                                                   const HttpRequest& request, const ParsedUrl& url,
                                                   std::size_t max_response_bytes) {
  namespace asio = boost::asio;
  namespace beast_http = boost::beast::http;
  ExchangeOutcome outcome{.response = HttpResponse{}};
  auto message = BuildRequest(request, url);
  if (!message) {
    outcome.response = std::unexpected(std::move(message.error()));
    co_return outcome;
  }
  auto [write_ec, written] = co_await beast_http::async_write(stream, *message, asio::as_tuple(asio::use_awaitable));
  (void)written;
  if (write_ec) {
    outcome.nothing_received = true;
    outcome.response = write_ec == asio::error::operation_aborted
                           ? Cancelled()
                           : Fail(HttpErrorKind::kDropped, "sending the request failed: " + write_ec.message());
    co_return outcome;
  }
  ResponseParser parser;
  LimitParser(parser, max_response_bytes);
  if (message->method() == beast_http::verb::head) parser.skip(true);
  if (request.on_body) {
    co_await ReadStreamed(stream, buffer, parser, request.on_body, max_response_bytes, outcome);
    co_return outcome;
  }
  auto [read_ec, read] = co_await beast_http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
  (void)read;
  if (read_ec) {
    ReadFailed(read_ec, parser, buffer, max_response_bytes, outcome);
    co_return outcome;
  }
  Finished(parser, buffer, outcome);
  co_return outcome;
}

}  // namespace skillrunner::http::exchange_detail
