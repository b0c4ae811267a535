#pragma once

// A real server on a temp Unix socket (and optionally TCP) with a skill tree
// of its own, run by two io threads, for tests that talk to it with real
// clients.

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runner/cli/reloading_host.h"
#include "runner/server/server.h"
#include "tests/runner/server/socket_client.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::testing {

// Skills: `echo` (built-in handler), `contact` (generation on a simulated
// provider answering after 50 ms) and `stuck` (answering after 20 s).
void WriteServerTree(const TempTree& tree, const std::string& extra_providers = "");

class ServerFixture {
 public:
  // `allow_broken`: as serve --allow-broken.
  explicit ServerFixture(const TempTree& tree, server::ServerOptions options = {}, bool allow_broken = false);
  ~ServerFixture();

  // Starts listening; the error text when it cannot.
  std::optional<std::string> Start();
  void Stop();  // graceful shutdown, then joins the io threads

  std::string socket_path() const { return options_.socket_path; }
  server::Server& server() { return *server_; }
  SocketClient Connect();  // fails the test when it cannot

 private:
  server::ServerOptions options_;
  boost::asio::io_context io_;
  std::unique_ptr<cli::ReloadingHost> host_;
  std::unique_ptr<server::Server> server_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

// {"jsonrpc":"2.0","id":ID,"method":"skills.invoke","params":{"skill":SKILL,"input":INPUT}}
std::string InvokeLine(int id, const std::string& skill, const std::string& input_json,
                       const std::string& options_json = "");

}  // namespace skillrunner::testing
