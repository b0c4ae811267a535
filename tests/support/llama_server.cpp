#include "tests/support/llama_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace skillrunner::test_support {

std::filesystem::path LlamaServer::Dir() {
  if (const char* dir = std::getenv("SKILLRUNNER_REALLLM_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / ".deps" / "realllm";
}

std::string LlamaServer::Missing() {
  const auto dir = Dir();
  for (const auto& need : {dir / "bin" / "llama-server", dir / "tiny-qwen2vocab-llama.gguf"}) {
    if (!std::filesystem::exists(need)) {
      return "no " + need.string() + ": run scripts/realllm/setup.sh " + dir.string() +
             " (4-8 minutes, once) or set SKILLRUNNER_REALLLM_DIR";
    }
  }
  return "";
}

LlamaServer::LlamaServer(const std::filesystem::path& log_dir, int context, const std::vector<std::string>& extra)
    : log_(log_dir / "llama-server.log") {
  if (why_ = Missing(); !why_.empty()) return;
  std::filesystem::create_directories(log_dir);
  port_ = FreeLoopbackPort();
  std::vector<std::string> args = {"-m",        (Dir() / "tiny-qwen2vocab-llama.gguf").string(),
                                   "--host",    "127.0.0.1",
                                   "--port",    std::to_string(port_),
                                   "-c",        std::to_string(context),
                                   "-np",       "1",
                                   "-t",        "1",
                                   "--no-webui"};
  args.insert(args.end(), extra.begin(), extra.end());
  process_ = std::make_unique<ChildProcess>((Dir() / "bin" / "llama-server").string(), args, CleanEnvironment(),
                                            log_dir, log_, log_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    PlainHttpAnswer health = PlainHttp(port_, "GET", "/health");
    if (health.status == 200 && health.body.find("\"ok\"") != std::string::npos) {
      started_ = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  why_ = "llama-server did not report healthy on port " + std::to_string(port_) + " within 30 s; its log:\n" + Log();
}

LlamaServer::~LlamaServer() = default;

std::string LlamaServer::Log() const {
  std::ifstream in(log_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

PlainHttpAnswer PlainHttp(std::uint16_t port, const std::string& method, const std::string& target,
                          const std::string& body) {
  PlainHttpAnswer answer;
  int fd = ConnectToLoopback(port);
  if (fd < 0) return answer;
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!body.empty())
    request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return answer;
  }
  std::string raw;
  char buffer[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0) break;
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || raw.size() < 12) return answer;
  answer.status = std::atoi(raw.substr(9, 3).c_str());
  if (std::size_t split = raw.find("\r\n\r\n"); split != std::string::npos) answer.body = raw.substr(split + 4);
  return answer;
}

}  // namespace skillrunner::test_support
