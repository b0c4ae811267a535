#include "services/http/proxy_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "services/http/http_client.h"

namespace skillrunner::http {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

bool EndsWithIgnoreCase(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && EqualsIgnoreCase(text.substr(text.size() - suffix.size()), suffix);
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// "[::1]:8080" -> "::1", "host:443" -> "host", "::1" stays (a bare IPv6).
std::string_view StripPortAndBrackets(std::string_view entry) {
  if (entry.starts_with('[')) {
    std::size_t close = entry.find(']');
    return close == std::string_view::npos ? entry.substr(1) : entry.substr(1, close - 1);
  }
  std::size_t colon = entry.find(':');
  if (colon != std::string_view::npos && entry.find(':', colon + 1) == std::string_view::npos) {
    return entry.substr(0, colon);
  }
  return entry;
}

bool EntryMatches(std::string_view host, std::string_view entry) {
  if (entry == "*") return true;
  entry = StripPortAndBrackets(entry);
  if (entry.starts_with("*.")) entry.remove_prefix(1);
  if (entry.starts_with('.')) {
    // ".example.com" matches example.com itself and every subdomain.
    return EqualsIgnoreCase(host, entry.substr(1)) || EndsWithIgnoreCase(host, entry);
  }
  if (entry.empty()) return false;
  if (EqualsIgnoreCase(host, entry)) return true;
  return host.size() > entry.size() && EndsWithIgnoreCase(host, entry) && host[host.size() - entry.size() - 1] == '.';
}

std::string GetEnv(const char* upper, const char* lower) {
  if (const char* value = std::getenv(upper); value != nullptr && *value != '\0') return value;
  if (const char* value = std::getenv(lower); value != nullptr && *value != '\0') return value;
  return {};
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  return EqualsIgnoreCase(host, "localhost") || EndsWithIgnoreCase(host, ".localhost") || host == "::1" ||
         (host.starts_with("127.") && host.find_first_not_of("0123456789.") == std::string_view::npos);
}

bool NoProxyMatches(std::string_view host, std::string_view no_proxy) {
  while (!no_proxy.empty()) {
    std::size_t end = no_proxy.find_first_of(", ");
    std::string_view entry = Trim(no_proxy.substr(0, end));
    if (!entry.empty() && EntryMatches(host, entry)) return true;
    if (end == std::string_view::npos) break;
    no_proxy.remove_prefix(end + 1);
  }
  return false;
}

bool UsesProxy(std::string_view host, std::string_view https_proxy, std::string_view no_proxy) {
  return !https_proxy.empty() && !IsLoopbackHost(host) && !NoProxyMatches(host, no_proxy);
}

HttpClientOptions WithProxyFromEnvironment(HttpClientOptions options) {
  options.https_proxy = GetEnv("HTTPS_PROXY", "https_proxy");
  options.no_proxy = GetEnv("NO_PROXY", "no_proxy");
  return options;
}

}  // namespace skillrunner::http
