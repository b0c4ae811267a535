#pragma once

// Opening the server's listeners and turning accepted sockets into
// connections (internal to runner/server).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <expected>
#include <string>
#include <string_view>

#include "runner/net/address.h"
#include "runner/server/server_state.h"

namespace skillrunner::server {

// The Unix socket at options.socket_path, mode 0600 (0660 with a group).
// Flags that cannot work are CONFIG_INVALID; a socket the system refuses
// (another server on it, bind or listen failing) is INTERNAL.
Result<void> OpenUnixListener(Server::State& state);
// A TCP listener; non-loopback addresses need allow_remote and a token
// (CONFIG_INVALID without them).
Result<void> OpenTcpListener(Server::State& state, std::string_view text);

// A listening TCP acceptor on the server's strand; the error (INTERNAL)
// names `text`.
Result<boost::asio::ip::tcp::acceptor> OpenTcpAcceptor(Server::State& state,
                                                       const boost::asio::ip::tcp::endpoint& endpoint,
                                                       std::string_view text);

void OpenConnection(const std::shared_ptr<Server::State>& state, boost::asio::local::stream_protocol::socket socket,
                    const std::string& peer);
void OpenConnection(const std::shared_ptr<Server::State>& state, boost::asio::ip::tcp::socket socket);

}  // namespace skillrunner::server
