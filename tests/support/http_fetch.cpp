#include "tests/support/http_fetch.h"

#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/child_process.h"

namespace skillrunner::test_support {

std::uint16_t WaitForViewPort(const std::filesystem::path& stderr_file, std::chrono::milliseconds timeout) {
  static const std::regex line("view: http://127\\.0\\.0\\.1:([0-9]+)/\n");
  for (auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
    std::ifstream in(stderr_file);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string seen = text.str();
    std::smatch match;
    if (std::regex_search(seen, match, line)) return static_cast<std::uint16_t>(std::stoi(match[1]));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

HttpReply HttpFetch(std::uint16_t port, const std::string& target, const std::string& headers) {
  HttpReply reply;
  int fd = ConnectToLoopback(port);
  if (fd < 0) return reply;
  const std::string request = "GET " + target + " HTTP/1.1\r\n" + headers + "Connection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return reply;
  }
  std::string text;
  char buffer[16384];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  const std::size_t split = text.find("\r\n\r\n");
  if (text.size() < 12 || split == std::string::npos) return reply;
  reply.status = std::stoi(text.substr(9, 3));
  reply.head = text.substr(0, split);
  reply.body = text.substr(split + 4);
  return reply;
}

}  // namespace skillrunner::test_support
