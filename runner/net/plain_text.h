#pragma once

// design.md §12.1: a client that speaks plain text to a TLS listener hears why
// before the close, in its own protocol, instead of a handshake that fails in
// silence: a JSON-RPC error line for a `{`, an HTTP 400 for a method.

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <string>
#include <string_view>

namespace skillrunner::net {

inline constexpr std::string_view kRequiresTls = "this listener requires TLS: connect with --tls / tls=True";

// What a client's first bytes are: a TLS handshake record (0x16), a JSON line, an HTTP request; the
// plain answer to them ("" for TLS and for bytes that are neither, which the handshake refuses).
std::string PlainTextAnswer(std::string_view first_bytes);

// Peeks at the client's first bytes (they stay for the handshake); true when they were plain text,
// which was then answered and the socket shut down: the caller closes it and stops.
template <typename Socket>
boost::asio::awaitable<bool> RefusePlainText(Socket& socket) {
  std::array<char, 8> peeked{};
  auto [ec, n] = co_await socket.async_receive(boost::asio::buffer(peeked), boost::asio::socket_base::message_peek,
                                               boost::asio::as_tuple(boost::asio::use_awaitable));
  if (ec || n == 0) co_return false;
  const std::string answer = PlainTextAnswer(std::string_view(peeked.data(), n));
  if (answer.empty()) co_return false;
  co_await boost::asio::async_write(socket, boost::asio::buffer(answer),
                                    boost::asio::as_tuple(boost::asio::use_awaitable));
  boost::system::error_code ignored;
  socket.shutdown(Socket::shutdown_both, ignored);
  co_return true;
}

}  // namespace skillrunner::net
