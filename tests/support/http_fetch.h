#pragma once

// One plain HTTP/1.1 request to 127.0.0.1:PORT on a fresh connection
// (Connection: close), read to the end: what the viewer's tests and its
// benchmark send, with the headers a browser or curl would.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace skillrunner::test_support {

struct HttpReply {
  int status = 0;    // 0: no answer
  std::string head;  // the status line and headers
  std::string body;
};

// Waits (at most `timeout`) until `stderr_file` holds `skillrunner view`'s "view: http://127.0.0.1:PORT/"
// line; the port, or 0 when it never came.
std::uint16_t WaitForViewPort(const std::filesystem::path& stderr_file, std::chrono::milliseconds timeout);

HttpReply HttpFetch(std::uint16_t port, const std::string& target, const std::string& headers = "Host: 127.0.0.1\r\n");
// Any method, with a body (Content-Length set; `headers` end each line with CRLF).
HttpReply HttpSend(std::uint16_t port, const std::string& method, const std::string& target, const std::string& headers,
                   const std::string& body);
// The value of header `name` (any case) in `head`, "" when it has none.
std::string HeaderOf(const HttpReply& reply, std::string_view name);

}  // namespace skillrunner::test_support
