// The plain value types of http_client.h (no Asio here).
#include <cctype>

#include "services/http/http_client.h"

namespace skillrunner::http {

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(key[i])) == std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (same) return std::string_view(value);
  }
  return std::nullopt;
}

std::string_view HttpErrorKindName(HttpErrorKind kind) {
  switch (kind) {
    case HttpErrorKind::kInvalidUrl:
      return "invalid_url";
    case HttpErrorKind::kConnect:
      return "connect";
    case HttpErrorKind::kTls:
      return "tls";
    case HttpErrorKind::kTimeout:
      return "timeout";
    case HttpErrorKind::kDropped:
      return "dropped";
    case HttpErrorKind::kProtocol:
      return "protocol";
    case HttpErrorKind::kTooLarge:
      return "too_large";
    case HttpErrorKind::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

}  // namespace skillrunner::http
