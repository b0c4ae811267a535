#include "runner/net/listener.h"

#include <grp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>
#include <optional>

namespace skillrunner::net {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
using generic = asio::generic::stream_protocol;

namespace {

constexpr std::chrono::milliseconds kPauseAfterFailedAccept{100};

std::string Errno(int error) { return std::strerror(error); }

// A socket file left by a server that died is replaced; one a live server answers on is not.
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

Result<gid_t> GroupNamed(const std::string& name) {
  if (name.empty()) return static_cast<gid_t>(-1);
  struct group* entry = ::getgrnam(name.c_str());
  if (!entry) return Fail(ErrorCode::kConfigInvalid, "--socket-group: no group named \"" + name + "\"");
  return entry->gr_gid;
}

// The socket's file given to `group`, mode 0660; the file is removed when that fails.
Result<void> GiveToGroup(const UnixSocket& socket, gid_t group) {
  if (group == static_cast<gid_t>(-1)) return {};
  if (::chown(socket.path.c_str(), static_cast<uid_t>(-1), group) == 0 && ::chmod(socket.path.c_str(), 0660) == 0) {
    return {};
  }
  int error = errno;
  ::unlink(socket.path.c_str());
  return Fail(ErrorCode::kInternal, "cannot give " + socket.path + " to group " + socket.group + ": " + Errno(error));
}

// An accepted TCP socket as the generic socket every door reads, with TCP_NODELAY.
Accepted FromTcp(tcp::socket socket) {
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  auto remote = socket.remote_endpoint(ec);
  std::string name = ec ? "tcp:?" : "tcp:" + remote.address().to_string() + ":" + std::to_string(remote.port());
  const int family = !ec && remote.address().is_v6() ? AF_INET6 : AF_INET;
  auto executor = socket.get_executor();
  int fd = socket.release(ec);
  if (ec) return Accepted{generic::socket(executor), false, std::move(name)};
  return Accepted{generic::socket(executor, generic(family, IPPROTO_TCP), fd), false, std::move(name)};
}

Accepted FromUnix(local::socket socket, const std::string& path) {
  auto executor = socket.get_executor();
  boost::system::error_code ec;
  int fd = socket.release(ec);
  if (ec) return Accepted{generic::socket(executor), true, "unix:" + path};
  return Accepted{generic::socket(executor, generic(AF_UNIX, 0), fd), true, "unix:" + path};
}

}  // namespace

struct Listener::Impl {
  explicit Impl(asio::io_context& io) : strand(asio::make_strand(io)) {}
  asio::strand<asio::io_context::executor_type> strand;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<local::acceptor> unix_acceptor;
  std::string name;
  std::string unix_path;
  unsigned short port = 0;
  std::atomic<bool> stopped{false};

  template <class Acceptor>
  asio::awaitable<void> Accept(Acceptor& acceptor, NextWorker next, std::function<void(Accepted)> on_accept) {
    while (!stopped && acceptor.is_open()) {
      auto [ec, socket] =
          co_await acceptor.async_accept(asio::make_strand(next()), asio::as_tuple(asio::use_awaitable));
      if (ec == asio::error::operation_aborted || stopped) break;
      if (ec) {
        spdlog::warn("accept on {} failed: {}", name, ec.message());
        asio::steady_timer pause(strand, kPauseAfterFailedAccept);
        co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        continue;
      }
      if constexpr (std::is_same_v<Acceptor, tcp::acceptor>) {
        on_accept(FromTcp(std::move(socket)));
      } else {
        on_accept(FromUnix(std::move(socket), unix_path));
      }
    }
  }
};

Listener::Listener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Listener::~Listener() {
  if (!impl_->unix_path.empty() && !impl_->stopped) ::unlink(impl_->unix_path.c_str());
}

Result<std::shared_ptr<Listener>> Listener::Tcp(asio::io_context& io, const tcp::endpoint& endpoint, std::string name) {
  auto impl = std::make_unique<Impl>(io);
  tcp::acceptor acceptor(impl->strand);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Fail(ErrorCode::kInternal, "cannot listen on " + name + ": " + ec.message());
  impl->port = acceptor.local_endpoint(ec).port();
  impl->tcp_acceptor.emplace(std::move(acceptor));
  impl->name = std::move(name);
  return std::shared_ptr<Listener>(new Listener(std::move(impl)));
}

Result<std::shared_ptr<Listener>> Listener::Unix(asio::io_context& io, const UnixSocket& socket) {
  const std::string& path = socket.path;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Fail(ErrorCode::kConfigInvalid,
                "--socket path is too long for a Unix socket (" + std::to_string(path.size()) + " bytes)");
  }
  if (auto cleared = ClearStaleSocket(path); !cleared) return std::unexpected(std::move(cleared.error()));
  auto group = GroupNamed(socket.group);
  if (!group) return std::unexpected(std::move(group.error()));
  auto impl = std::make_unique<Impl>(io);
  local::acceptor acceptor(impl->strand);
  boost::system::error_code ec;
  acceptor.open(local(), ec);
  // The file is created without group/other bits, so there is no moment at which another user
  // could connect (umask is set before any io thread runs).
  mode_t previous = ::umask(0177);
  if (!ec) acceptor.bind(local::endpoint(path), ec);
  ::umask(previous);
  if (ec) return Fail(ErrorCode::kInternal, "cannot bind " + path + ": " + ec.message());
  if (auto given = GiveToGroup(socket, *group); !given) return std::unexpected(std::move(given.error()));
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    ::unlink(path.c_str());
    return Fail(ErrorCode::kInternal, "cannot listen on " + path + ": " + ec.message());
  }
  impl->unix_acceptor.emplace(std::move(acceptor));
  impl->name = path;
  impl->unix_path = path;
  return std::shared_ptr<Listener>(new Listener(std::move(impl)));
}

void Listener::Start(NextWorker next, std::function<void(Accepted)> on_accept,
                     std::function<void(std::exception_ptr)> on_failure) {
  auto loop = [self = shared_from_this(), next = std::move(next),
               on_accept = std::move(on_accept)]() -> asio::awaitable<void> {
    if (self->impl_->tcp_acceptor) {
      co_await self->impl_->Accept(*self->impl_->tcp_acceptor, next, on_accept);
    } else {
      co_await self->impl_->Accept(*self->impl_->unix_acceptor, next, on_accept);
    }
  };
  asio::co_spawn(impl_->strand, std::move(loop), std::move(on_failure));
}

void Listener::Stop() {
  if (impl_->stopped.exchange(true)) return;
  if (!impl_->unix_path.empty()) ::unlink(impl_->unix_path.c_str());
  asio::post(impl_->strand, [self = shared_from_this()] {
    boost::system::error_code ignored;
    if (self->impl_->tcp_acceptor) self->impl_->tcp_acceptor->close(ignored);
    if (self->impl_->unix_acceptor) self->impl_->unix_acceptor->close(ignored);
  });
}

unsigned short Listener::port() const { return impl_->port; }

const std::string& Listener::name() const { return impl_->name; }

}  // namespace skillrunner::net
