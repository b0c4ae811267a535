#pragma once

// A real llama.cpp `llama-server` with the tiny random-weight model, built by
// scripts/realllm/setup.sh into .deps/realllm (or SKILLRUNNER_REALLLM_DIR),
// on a loopback port, for the integration suite (tests/integration). Started
// by the constructor; killed and reaped by the destructor.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.h"

namespace skillrunner::test_support {

class LlamaServer {
 public:
  // Where setup.sh put the binary and the model.
  static std::filesystem::path Dir();
  // Why the suite cannot run here ("" when the binary and the model are there).
  static std::string Missing();

  // Starts `llama-server -c context -np 1 -t 1` with `extra` options on a free
  // port, its log in `log_dir`, and waits (up to 30 s) for GET /health to say ok.
  LlamaServer(const std::filesystem::path& log_dir, int context, const std::vector<std::string>& extra = {});
  ~LlamaServer();

  bool started() const { return started_; }
  const std::string& why() const { return why_; }
  std::uint16_t port() const { return port_; }
  // The OpenAI-compatible base URL: http://127.0.0.1:PORT/v1
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // Everything the server logged so far.
  std::string Log() const;

 private:
  std::filesystem::path log_;
  std::uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> process_;
  bool started_ = false;
  std::string why_;
};

// One HTTP/1.1 request to 127.0.0.1:port (Connection: close); the status
// line's code and the body, or status 0 when there was no answer.
struct PlainHttpAnswer {
  int status = 0;
  std::string body;
};
PlainHttpAnswer PlainHttp(std::uint16_t port, const std::string& method, const std::string& target,
                          const std::string& body = "");

}  // namespace skillrunner::test_support
