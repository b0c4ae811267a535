#pragma once

// Credentials that expire (design.md §11.5): AWS keys with a session token, or an OAuth2 access
// token, fetched when needed and kept until five minutes before they expire.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/providers/provider.h"

namespace skillrunner::providers {

struct CloudCredentials {
  std::string key_id;                                            // AWS access key id; empty for a bearer token
  std::string secret;                                            // AWS secret access key, or the bearer token
  std::string session_token;                                     // AWS temporary credentials' token
  std::optional<std::chrono::system_clock::time_point> expires;  // none: they do not expire
  std::string source;  // where they came from, for logs: "environment", "web identity", ...

  // The parts that must never reach a log or an answer.
  std::vector<std::string> Secrets() const;
};

using CredentialFetch = std::function<boost::asio::awaitable<std::expected<CloudCredentials, ProviderError>>()>;
using WallClock = std::function<std::chrono::system_clock::time_point()>;

// Credentials refresh this long before they expire.
inline constexpr std::chrono::minutes kRefreshBeforeExpiry{5};

// Thread-safe. A fetch runs once at a time: those who ask while one runs wait for its outcome and
// share it (a cancelled fetch sends them to fetch again).
class CredentialCache {
 public:
  explicit CredentialCache(CredentialFetch fetch, WallClock now = {});
  ~CredentialCache();
  CredentialCache(const CredentialCache&) = delete;
  CredentialCache& operator=(const CredentialCache&) = delete;

  // The kept credentials while more than kRefreshBeforeExpiry is left of them, else fresh ones.
  boost::asio::awaitable<std::expected<CloudCredentials, ProviderError>> Get();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// An error fetching credentials from `what` (a token, STS or metadata endpoint): unreachable or
// a 5xx is transient, a 4xx is PROVIDER_ERROR (design.md §11.6).
ProviderError CredentialError(std::string what, int http_status, std::string message);

}  // namespace skillrunner::providers
