#include "tests/support/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <thread>

namespace skillrunner::test_support {
namespace {

// Reads one RESP reply from `in` at `pos` as text (see Command).
std::optional<std::string> ParseReply(const std::string& in, std::size_t& pos) {
  std::size_t end = in.find("\r\n", pos);
  if (end == std::string::npos) return std::nullopt;
  char type = in[pos];
  std::string head = in.substr(pos + 1, end - pos - 1);
  pos = end + 2;
  if (type == '+' || type == '-' || type == ':') return head;
  long n = std::strtol(head.c_str(), nullptr, 10);
  if (type == '$') {
    if (n < 0) return std::string("(nil)");
    if (in.size() < pos + static_cast<std::size_t>(n) + 2) return std::nullopt;
    std::string text = in.substr(pos, static_cast<std::size_t>(n));
    pos += static_cast<std::size_t>(n) + 2;
    return text;
  }
  if (type == '*') {
    std::string lines;
    for (long i = 0; i < n; ++i) {
      auto element = ParseReply(in, pos);
      if (!element) return std::nullopt;
      if (i > 0) lines += '\n';
      lines += *element;
    }
    return lines;
  }
  return std::nullopt;
}

}  // namespace

std::string RedisServer::Binary() {
  for (const char* candidate : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

RedisServer::RedisServer(std::filesystem::path dir) : dir_(std::move(dir)) {
  if (Binary().empty()) {
    why_ = "redis-server is not installed (scripts/test.sh installs Debian's redis-server)";
    return;
  }
  port_ = FreeLoopbackPort();
  started_ = Start();
}

RedisServer::~RedisServer() = default;

bool RedisServer::Start() {
  std::filesystem::create_directories(dir_);
  process_ = std::make_unique<ChildProcess>(
      Binary(),
      std::vector<std::string>{"--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                               "no", "--dir", dir_.string(), "--daemonize", "no"},
      CleanEnvironment(), dir_, dir_ / "redis.stdout", dir_ / "redis.stderr");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Command({"PING"}) == "PONG") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  why_ = "redis-server did not answer PING on port " + std::to_string(port_) + " within 10 s";
  return false;
}

void RedisServer::Kill() {
  if (!process_) return;
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(5));
  process_.reset();
}

bool RedisServer::Restart() {
  Kill();
  started_ = Start();
  return started_;
}

std::optional<std::string> RedisServer::Command(const std::vector<std::string>& args) const {
  int fd = ConnectToLoopback(port_);
  if (fd < 0) return std::nullopt;
  std::string request = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& arg : args) request += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return std::nullopt;
  }
  std::string in;
  std::optional<std::string> reply;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!reply && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    in.append(buffer, static_cast<std::size_t>(n));
    std::size_t pos = 0;
    reply = ParseReply(in, pos);
  }
  ::close(fd);
  return reply;
}

}  // namespace skillrunner::test_support
