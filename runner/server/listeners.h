#pragma once

// Opening the server's listeners and turning accepted sockets into
// connections (internal to runner/server).

#include <expected>
#include <string>
#include <string_view>

#include "runner/net/address.h"
#include "runner/net/listener.h"
#include "runner/server/server_state.h"

namespace skillrunner::server {

// The Unix socket at options.socket_path, mode 0600 (0660 with a group).
// Flags that cannot work are CONFIG_INVALID; a socket the system refuses
// (another server on it, bind or listen failing) is INTERNAL.
Result<void> OpenUnixListener(Server::State& state);
// A TCP listener; non-loopback addresses need allow_remote and a token
// (CONFIG_INVALID without them).
Result<void> OpenTcpListener(Server::State& state, std::string_view text);

// Serves an accepted socket as a Connection (refused beyond max_connections).
void OpenConnection(const std::shared_ptr<Server::State>& state, net::Accepted accepted);

}  // namespace skillrunner::server
