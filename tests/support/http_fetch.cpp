#include "tests/support/http_fetch.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/child_process.h"

namespace skillrunner::test_support {

std::uint16_t WaitForViewPort(const std::filesystem::path& stderr_file, std::chrono::milliseconds timeout) {
  static const std::regex line("view: https?://127\\.0\\.0\\.1:([0-9]+)/\n");
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
  return HttpSend(port, "GET", target, headers, "");
}

HttpReply HttpSend(std::uint16_t port, const std::string& method, const std::string& target, const std::string& headers,
                   const std::string& body) {
  HttpReply reply;
  int fd = ConnectToLoopback(port);
  if (fd < 0) return reply;
  std::string request = method + " " + target + " HTTP/1.1\r\n" + headers + "Connection: close\r\n";
  if (!body.empty() || method == "POST") request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
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

std::string HeaderOf(const HttpReply& reply, std::string_view name) {
  std::size_t start = reply.head.find("\r\n");
  while (start != std::string::npos) {
    start += 2;
    const std::size_t end = reply.head.find("\r\n", start);
    std::string_view line =
        std::string_view(reply.head).substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::size_t colon = line.find(':');
    if (colon == name.size() && std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      return std::string(value);
    }
    start = end;
  }
  return "";
}

}  // namespace skillrunner::test_support
