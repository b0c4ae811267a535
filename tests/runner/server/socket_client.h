#pragma once

// A plain blocking JSON-lines client over a Unix or TCP socket, as a user's
// script would write one: send lines, read answer lines with a time limit.

#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::testing {

class SocketClient {
 public:
  static std::optional<SocketClient> ConnectUnix(const std::string& path);
  static std::optional<SocketClient> ConnectTcp(unsigned short port);
  SocketClient(SocketClient&& other) noexcept;
  SocketClient& operator=(SocketClient&&) = delete;
  ~SocketClient();

  bool Send(std::string_view bytes);  // writes everything (a line needs its '\n')
  // The next line without '\n'; nullopt on EOF or after `timeout`.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::optional<boost::json::value> ReadJson(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Sends one request and returns the next answer (for sequential use).
  boost::json::value Call(std::string_view request_line);
  // True when the server closed the connection (EOF) within `timeout`.
  bool WaitForClose(std::chrono::milliseconds timeout);
  void Close();
  int fd() const { return fd_; }

 private:
  explicit SocketClient(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace skillrunner::testing
