#pragma once

// Vertex AI's OAuth2 access tokens (design.md §11.5): from a service-account key file (a JWT signed
// RS256, exchanged at the key's token_uri), or from the metadata server (GKE workload identity, GCE).

#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "services/common/env.h"
#include "services/common/error.h"
#include "services/http/http_client.h"
#include "services/providers/cloud_credentials.h"

namespace skillrunner::providers::google {

inline constexpr std::string_view kCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";

struct GoogleSource {
  enum class Kind { kServiceAccount, kMetadata };
  Kind kind = Kind::kMetadata;
  std::string key_file;  // kServiceAccount: where the key came from (logs)
  std::string client_email, private_key_id, private_key, token_uri;
  std::string metadata_host = "metadata.google.internal";  // kMetadata: GCE_METADATA_HOST, host[:port]

  std::string Describe() const;
};

// The key file `key_file` (else GOOGLE_APPLICATION_CREDENTIALS) when one is named: it must be a
// service account's key (type service_account) with client_email, private_key and token_uri; else the
// metadata server. The error (CONFIG_INVALID) names the file and what is wrong with it.
Result<GoogleSource> ResolveGoogleSource(const EnvLookup& env, std::string_view key_file);

// The JWT a service account signs for its token: {iss, scope, aud: token_uri, iat, exp: iat + 3600}
// signed RS256 with its key; an error (CONFIG_INVALID) when the key does not load.
Result<std::string> ServiceAccountJwt(const GoogleSource& source, std::chrono::system_clock::time_point now);

// Fetches an access token for `source` through `client`.
CredentialFetch GoogleTokenFetch(GoogleSource source, std::shared_ptr<http::HttpClient> client, WallClock now);

}  // namespace skillrunner::providers::google
