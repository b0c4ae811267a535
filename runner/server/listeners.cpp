#include "runner/server/listeners.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "runner/server/connection.h"

namespace skillrunner::server {
namespace asio = boost::asio;

Result<void> OpenUnixListener(Server::State& state) {
  auto listener = net::Listener::Unix(state.io, net::UnixSocket{state.options.socket_path, state.options.socket_group});
  if (!listener) return std::unexpected(std::move(listener.error()));
  state.unix_listener = std::move(*listener);
  return {};
}

Result<void> OpenTcpListener(Server::State& state, std::string_view text) {
  auto endpoint = net::ParseListenAddress(text);
  if (!endpoint) return Fail(std::move(endpoint.error()), "--listen " + std::string(text));
  if (!endpoint->address().is_loopback()) {
    if (!state.options.allow_remote) {
      return Fail(ErrorCode::kConfigInvalid, "--listen " + std::string(text) +
                                                 " is not a loopback address; add --allow-remote to accept other "
                                                 "hosts (clients then need SKILLRUNNER_TOKEN)");
    }
    const bool mutual = state.tls && state.tls->mutual();  // a client certificate is the credential
    if (state.options.identity.Open() && !mutual) {
      return Fail(ErrorCode::kConfigInvalid, "--listen " + std::string(text) +
                                                 " accepts other hosts, so it needs a token: set SKILLRUNNER_TOKEN in "
                                                 "the server's environment (or give the config tenants)");
    }
    if (!state.tls) {
      spdlog::warn(
          "--listen {} accepts other hosts without TLS: tokens, inputs and outputs cross the network in "
          "plain text (give --tls-cert and --tls-key)",
          text);
    }
  }
  auto listener = net::Listener::Tcp(state.io, *endpoint, std::string(text));
  if (!listener) return std::unexpected(std::move(listener.error()));
  state.tcp_listeners.push_back(std::move(*listener));
  return {};
}

std::function<void(std::exception_ptr)> StopServerIfLoopFails(std::shared_ptr<Server::State> state, std::string loop) {
  return [state = std::move(state), loop = std::move(loop)](std::exception_ptr failure) {
    if (!failure) return;
    std::string what = "an unknown exception";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("the {} stopped: {}; shutting the server down", loop, what);
    asio::post(state->strand, [state] { state->BeginShutdown(); });
  };
}

void StartAccepting(const std::shared_ptr<Server::State>& state) {
  std::weak_ptr<Server::State> weak = state;
  auto next = [weak, fallback = &state->io]() -> asio::io_context& {
    auto alive = weak.lock();
    return alive ? alive->NextWorker() : *fallback;
  };
  auto adopt = [weak](net::Accepted accepted) {
    auto alive = weak.lock();
    if (alive && !alive->draining) OpenConnection(alive, std::move(accepted));
  };
  if (state->unix_listener) {
    state->unix_listener->Start(next, adopt, StopServerIfLoopFails(state, "Unix socket accept loop"));
  }
  for (auto& listener : state->tcp_listeners) {
    listener->Start(next, adopt, StopServerIfLoopFails(state, "TCP accept loop"));
  }
}

namespace {

// Every accepted socket, Unix or TCP, becomes a Connection on its own strand
// of the next worker io_context.
void Adopt(const std::shared_ptr<Server::State>& state, Connection::Socket socket, bool is_unix, std::string peer,
           std::shared_ptr<asio::ssl::context> tls = nullptr) {
  if (static_cast<std::size_t>(state->metrics.connections()) >= state->options.limits.max_connections) {
    state->metrics.RecordRejected("max_connections");
    spdlog::warn("refusing a connection from {}: {} are open (max_connections)", peer,
                 state->options.limits.max_connections);
    return;  // the socket closes as it goes out of scope
  }
  std::uint64_t id = 0;
  {
    std::lock_guard lock(state->connections_mutex);
    id = ++state->next_connection_id;
  }
  auto connection =
      std::make_shared<Connection>(state, std::move(socket), is_unix, std::move(peer), id, std::move(tls));
  state->AddConnection(connection, id);
  connection->Start();
}

}  // namespace

void OpenConnection(const std::shared_ptr<Server::State>& state, net::Accepted accepted) {
  std::shared_ptr<asio::ssl::context> tls;
  if (!accepted.unix_socket && state->tls) tls = state->tls->Current();
  Adopt(state, std::move(accepted.socket), accepted.unix_socket, std::move(accepted.remote), std::move(tls));
}

}  // namespace skillrunner::server
