#include "runner/net/plain_text.h"

#include <cctype>

namespace skillrunner::net {

std::string PlainTextAnswer(std::string_view first_bytes) {
  if (first_bytes.empty() || first_bytes.front() == '\x16') return "";
  if (first_bytes.front() == '{') {
    return R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":")" + std::string(kRequiresTls) +
           R"(","data":{"code":"INPUT_INVALID","message":")" + std::string(kRequiresTls) + "\"}}}\n";
  }
  if (std::isupper(static_cast<unsigned char>(first_bytes.front())) == 0) return "";
  const std::string body = std::string(kRequiresTls) + "\n";
  return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace skillrunner::net
