#include "runner/server/listeners.h"

#include <grp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>

#include "runner/server/connection.h"

namespace skillrunner::server {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;

namespace {

std::string Errno(int error) { return std::strerror(error); }

// A socket file left by a server that died is replaced; one a live server
// answers on is not.
Result<void> ClearStaleSocket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return Fail(ErrorCode::kInternal, "cannot inspect " + path + ": " + Errno(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Fail(ErrorCode::kConfigInvalid, path + " exists and is not a socket; refusing to replace it");
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(ErrorCode::kInternal, "socket(): " + Errno(errno));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  int connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  int error = errno;
  ::close(fd);
  if (connected == 0) {
    return Fail(ErrorCode::kInternal,
                "another server is listening on " + path + "; stop it first or pick another --socket");
  }
  if (error != ECONNREFUSED && error != ENOENT) {
    return Fail(ErrorCode::kInternal, "cannot tell whether a server still listens on " + path + ": " + Errno(error));
  }
  spdlog::info("replacing the stale socket file {} (no server answers on it)", path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Fail(ErrorCode::kInternal, "cannot remove the stale socket " + path + ": " + Errno(errno));
  }
  return {};
}

asio::awaitable<void> AcceptUnix(std::shared_ptr<Server::State> state) {
  std::string peer = "unix:" + state->options.socket_path;
  while (state->unix_acceptor && state->unix_acceptor->is_open()) {
    auto [ec, socket] = co_await state->unix_acceptor->async_accept(asio::make_strand(state->NextWorker()),
                                                                    asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted || state->draining) break;
    if (ec) {
      spdlog::warn("accept on {} failed: {}", state->options.socket_path, ec.message());
      asio::steady_timer pause(state->strand, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    OpenConnection(state, std::move(socket), peer);
  }
}

asio::awaitable<void> AcceptTcp(std::shared_ptr<Server::State> state, std::size_t index) {
  while (index < state->tcp_acceptors.size() && state->tcp_acceptors[index].is_open()) {
    auto [ec, socket] = co_await state->tcp_acceptors[index].async_accept(asio::make_strand(state->NextWorker()),
                                                                          asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted || state->draining) break;
    if (ec) {
      spdlog::warn("accept on {} failed: {}", state->options.listen[index], ec.message());
      asio::steady_timer pause(state->strand, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    OpenConnection(state, std::move(socket));
  }
}

}  // namespace

Result<void> OpenUnixListener(Server::State& state) {
  const std::string& path = state.options.socket_path;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Fail(ErrorCode::kConfigInvalid,
                "--socket path is too long for a Unix socket (" + std::to_string(path.size()) + " bytes)");
  }
  if (auto cleared = ClearStaleSocket(path); !cleared) return cleared;
  gid_t group = static_cast<gid_t>(-1);
  if (!state.options.socket_group.empty()) {
    struct group* entry = ::getgrnam(state.options.socket_group.c_str());
    if (!entry) {
      return Fail(ErrorCode::kConfigInvalid, "--socket-group: no group named \"" + state.options.socket_group + "\"");
    }
    group = entry->gr_gid;
  }
  local::acceptor acceptor(state.strand);
  boost::system::error_code ec;
  acceptor.open(local(), ec);
  // The file is created without group/other bits, so there is no moment at
  // which another user could connect (umask is set before any io thread runs).
  mode_t previous = ::umask(0177);
  if (!ec) acceptor.bind(local::endpoint(path), ec);
  ::umask(previous);
  if (ec) return Fail(ErrorCode::kInternal, "cannot bind " + path + ": " + ec.message());
  if (group != static_cast<gid_t>(-1)) {
    if (::chown(path.c_str(), static_cast<uid_t>(-1), group) != 0 || ::chmod(path.c_str(), 0660) != 0) {
      int error = errno;
      ::unlink(path.c_str());
      return Fail(ErrorCode::kInternal,
                  "cannot give " + path + " to group " + state.options.socket_group + ": " + Errno(error));
    }
  }
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    ::unlink(path.c_str());
    return Fail(ErrorCode::kInternal, "cannot listen on " + path + ": " + ec.message());
  }
  state.unix_acceptor.emplace(std::move(acceptor));
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
  auto acceptor = OpenTcpAcceptor(state, *endpoint, text);
  if (!acceptor) return std::unexpected(std::move(acceptor.error()));
  state.tcp_acceptors.push_back(std::move(*acceptor));
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
  if (state->unix_acceptor) {
    asio::co_spawn(state->strand, AcceptUnix(state), StopServerIfLoopFails(state, "Unix socket accept loop"));
  }
  for (std::size_t i = 0; i < state->tcp_acceptors.size(); ++i) {
    asio::co_spawn(state->strand, AcceptTcp(state, i), StopServerIfLoopFails(state, "TCP accept loop"));
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

void OpenConnection(const std::shared_ptr<Server::State>& state, local::socket socket, const std::string& peer) {
  auto executor = socket.get_executor();
  boost::system::error_code ec;
  int fd = socket.release(ec);
  if (ec) return;
  Adopt(state, Connection::Socket(executor, asio::generic::stream_protocol(AF_UNIX, 0), fd), true, peer);
}

void OpenConnection(const std::shared_ptr<Server::State>& state, tcp::socket socket) {
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  auto remote = socket.remote_endpoint(ec);
  std::string peer = ec ? "tcp:?" : "tcp:" + remote.address().to_string() + ":" + std::to_string(remote.port());
  int family = remote.address().is_v6() ? AF_INET6 : AF_INET;
  auto executor = socket.get_executor();
  int fd = socket.release(ec);
  if (ec) return;
  Adopt(state, Connection::Socket(executor, asio::generic::stream_protocol(family, IPPROTO_TCP), fd), false,
        std::move(peer), state->tls ? state->tls->Current() : nullptr);
}

Result<tcp::acceptor> OpenTcpAcceptor(Server::State& state, const tcp::endpoint& endpoint, std::string_view text) {
  tcp::acceptor acceptor(state.strand);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Fail(ErrorCode::kInternal, "cannot listen on " + std::string(text) + ": " + ec.message());
  return acceptor;
}

}  // namespace skillrunner::server
