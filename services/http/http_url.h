#pragma once

// Internal to services/http: the parts of an absolute http(s) URL the client
// needs. No Asio or Beast here, so tests may include it.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "services/common/error.h"

namespace skillrunner::http {

struct ParsedUrl {
  bool https = false;
  std::string host;  // without IPv6 brackets, lower-cased
  std::uint16_t port = 0;
  std::string target;  // path and query, at least "/"

  // "host:port" with IPv6 literals bracketed (CONNECT target, messages).
  std::string Authority() const;
  // Value of the Host header: the port only when it is not the default.
  std::string HostHeader() const;
};

// Accepts http:// and https:// URLs with a host; the message says what is
// wrong otherwise (CONFIG_INVALID; never echoes userinfo, which may hold a
// password).
Result<ParsedUrl> ParseHttpUrl(std::string_view url);

}  // namespace skillrunner::http
