#include "tests/support/http_fetch.h"

#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/child_process.h"

namespace skillrunner::test_support {

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
