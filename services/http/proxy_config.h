#pragma once

// Internal to services/http: which https:// hosts go through HTTPS_PROXY.
// No Asio or Beast here, so tests may include it.

#include <string_view>

namespace skillrunner::http {

// Loopback names and addresses (localhost, *.localhost, 127.0.0.0/8, ::1):
// always reached directly, whatever the proxy settings say.
bool IsLoopbackHost(std::string_view host);

// True when `host` matches the NO_PROXY-style list: comma (or space)
// separated entries, each "*" (everything), an exact host or IP, or a domain
// ("example.com" and ".example.com" both match example.com and its
// subdomains). Entries may carry a ":port", which is ignored. Case-insensitive.
bool NoProxyMatches(std::string_view host, std::string_view no_proxy);

// Whether a request to `host` over https uses `https_proxy`.
bool UsesProxy(std::string_view host, std::string_view https_proxy, std::string_view no_proxy);

}  // namespace skillrunner::http
