#pragma once

// The one place a listening socket is opened (design.md §12.1): serve's
// JSON-lines socket (TCP or Unix), its metrics listener, /mcp and `view` all
// take their connections from a Listener. It accepts until stopped, puts
// each connection on a strand of the next worker, and hands it on; a failed
// accept (out of descriptors) is logged and retried after a pause.

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "services/common/error.h"

namespace skillrunner::net {

// A connection a Listener accepted, on a strand of the worker it went to.
struct Accepted {
  boost::asio::generic::stream_protocol::socket socket;
  bool unix_socket = false;
  std::string remote;  // "tcp:ADDRESS:PORT", or "unix:PATH"
};

struct UnixSocket {
  std::string path;
  std::string group;  // "": mode 0600; else the file is the group's, mode 0660
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // TCP at `endpoint` (SO_REUSEADDR, TCP_NODELAY on each connection); INTERNAL naming `name` when
  // the system refuses it.
  static Result<std::shared_ptr<Listener>> Tcp(boost::asio::io_context& io,
                                               const boost::asio::ip::tcp::endpoint& endpoint, std::string name);
  // A Unix socket. A socket file left by a process that died is replaced; one a live server
  // answers on is not (INTERNAL); a path too long or a file that is not a socket is CONFIG_INVALID.
  static Result<std::shared_ptr<Listener>> Unix(boost::asio::io_context& io, const UnixSocket& socket);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // The io_context the next connection runs on.
  using NextWorker = std::function<boost::asio::io_context&()>;
  // Accepts until Stop; `on_failure` gets the exception that ends the loop, if one does.
  void Start(NextWorker next, std::function<void(Accepted)> on_accept,
             std::function<void(std::exception_ptr)> on_failure);
  // Stops accepting (any thread); a Unix socket's file is removed.
  void Stop();
  unsigned short port() const;  // 0 for a Unix socket
  const std::string& name() const;

  struct Impl;

 private:
  explicit Listener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillrunner::net
