#pragma once

// Where Bedrock's credentials come from (design.md §11.5, §11.6): the chain as botocore orders it:
// the environment, web identity (EKS IRSA: a token file exchanged at STS), the shared credentials
// file, the config file, container credentials (EKS Pod Identity, ECS), then EC2's IMDSv2.

#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "services/common/env.h"
#include "services/common/error.h"
#include "services/http/http_client.h"
#include "services/providers/cloud_credentials.h"

namespace skillrunner::providers::aws {

enum class AwsSource { kEnvironment, kWebIdentity, kSharedFile, kContainer, kImds };

// The chain's first source that applies, with what it needs; decided at load.
struct AwsChain {
  AwsSource source = AwsSource::kImds;
  CloudCredentials fixed;                          // kEnvironment, kSharedFile
  std::string token_file, role_arn, session_name;  // kWebIdentity
  std::string sts_endpoint;                        // kWebIdentity: AWS_ENDPOINT_URL_STS, else regional STS
  std::string container_uri, container_token, container_token_file;  // kContainer
  std::string imds_endpoint;  // kImds: AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254

  // "environment", "web identity (arn:...)", "shared credentials file (profile p)", ...
  std::string Describe() const;
};

// The chain for `region` and the profile (`profile` when set, else AWS_PROFILE, else default). An
// error when nothing applies (IMDS disabled by AWS_EC2_METADATA_DISABLED=true), when an asked-for
// profile is in neither file, when a file does not parse (path:line), or when the profile uses what
// is not supported (SSO, credential_process, source_profile); CONFIG_INVALID.
Result<AwsChain> ResolveAwsChain(const EnvLookup& env, std::string_view region, std::string_view profile);

// Fetches the chain's credentials through `client` (fixed ones at once).
CredentialFetch AwsCredentialFetch(AwsChain chain, std::shared_ptr<http::HttpClient> client);

}  // namespace skillrunner::providers::aws
