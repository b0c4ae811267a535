#pragma once

// `skillrunner serve` as a separate process on a test's tree (its config,
// skills and rubrics), its stderr kept in a file; and a client that connects
// once the socket is there.

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/runner/server/socket_client.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::testing {

class ServeProcess {
 public:
  // `name` tells replicas apart: its stderr goes to NAME.stderr in the tree.
  ServeProcess(const TempTree& tree, std::vector<std::string> args, std::vector<std::string> env = {},
               const std::string& name = "serve")
      : stderr_path_(tree.Path(name + ".stderr").string()),
        process_(SKILLRUNNER_BINARY, ServeArgs(tree, std::move(args)), test_support::CleanEnvironment(env), {}, {},
                 stderr_path_) {}
  void Signal(int signal) { process_.Signal(signal); }
  pid_t pid() const { return process_.pid(); }
  int Wait(std::chrono::milliseconds timeout) { return process_.Wait(timeout); }
  std::string Stderr() const {
    std::ifstream in(stderr_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  static std::vector<std::string> ServeArgs(const TempTree& tree, std::vector<std::string> args) {
    std::vector<std::string> argv = tree.TreeFlags();
    argv.insert(argv.begin(), "serve");
    argv.insert(argv.end(), {"--log-level", "info"});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  std::string stderr_path_;
  test_support::ChildProcess process_;
};

inline std::optional<SocketClient> ConnectWhenReady(const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto client = SocketClient::ConnectUnix(path)) return client;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

}  // namespace skillrunner::testing
