#pragma once

// A real `redis-server` (Debian's, installed by scripts/test.sh) on a
// loopback port, without persistence, for the tests of the shared state.
// Started by the constructor; killed and reaped by the destructor.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/child_process.h"

namespace skillrunner::test_support {

class RedisServer {
 public:
  // Where redis-server is, or "" when it is not installed.
  static std::string Binary();

  // Starts on a free loopback port and waits until it answers PING.
  // started() is false (and why() says why) when it could not.
  explicit RedisServer(std::filesystem::path dir);
  ~RedisServer();

  bool started() const { return started_; }
  const std::string& why() const { return why_; }
  std::uint16_t port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }

  void Kill();     // SIGKILL, as a crash would
  bool Restart();  // on the same port; true once it answers PING

  // One command over a fresh connection (RESP); the reply as text: bulk
  // strings and statuses as they are, integers in decimal, arrays one
  // element a line, nil as "(nil)". nullopt when Redis did not answer.
  std::optional<std::string> Command(const std::vector<std::string>& args) const;

 private:
  bool Start();
  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> process_;
  bool started_ = false;
  std::string why_;
};

}  // namespace skillrunner::test_support
