#include "services/http/http_url.h"

#include <algorithm>
#include <boost/algorithm/string/case_conv.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>
#include <charconv>

namespace skillrunner::http {
namespace {

std::string Lower(std::string_view text) { return boost::algorithm::to_lower_copy(std::string(text)); }

std::string Bracketed(const std::string& host) { return host.find(':') == std::string::npos ? host : "[" + host + "]"; }

}  // namespace

std::string ParsedUrl::Authority() const { return Bracketed(host) + ":" + std::to_string(port); }

std::string ParsedUrl::HostHeader() const {
  bool default_port = (https && port == 443) || (!https && port == 80);
  return default_port ? Bracketed(host) : Authority();
}

Result<ParsedUrl> ParseHttpUrl(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return Fail(ErrorCode::kConfigInvalid, "invalid URL: " + parsed.error().message());
  const boost::urls::url_view& view = *parsed;
  ParsedUrl out;
  std::string scheme = Lower(view.scheme());
  if (scheme == "https") {
    out.https = true;
  } else if (scheme != "http") {
    return Fail(ErrorCode::kConfigInvalid, "unsupported URL scheme '" + scheme + "' (want http or https)");
  }
  switch (view.host_type()) {
    case boost::urls::host_type::ipv4:
    case boost::urls::host_type::name:
    case boost::urls::host_type::ipv6:
      out.host = Lower(view.host_address());
      break;
    default:
      return Fail(ErrorCode::kConfigInvalid, "URL has no usable host");
  }
  if (out.host.empty()) return Fail(ErrorCode::kConfigInvalid, "URL has no host");
  out.port = out.https ? 443 : 80;
  if (view.has_port()) {
    std::string_view port = view.port();
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return Fail(ErrorCode::kConfigInvalid, "invalid port '" + std::string(port) + "'");
    }
    out.port = static_cast<std::uint16_t>(value);
  }
  out.target = std::string(view.encoded_path());
  if (out.target.empty()) out.target = "/";
  if (view.has_query()) out.target += "?" + std::string(view.encoded_query());
  return out;
}

}  // namespace skillrunner::http
