#pragma once

// AWS Signature Version 4 (design.md §11.5), for Bedrock Runtime: the canonical request, the string
// to sign and the Authorization header, as botocore's SigV4Auth computes them for a non-S3 service.

#include <chrono>
#include <string>

#include "services/http/http_client.h"
#include "services/providers/cloud_credentials.h"

namespace skillrunner::providers::aws {

struct SigV4Scope {
  std::string region;
  std::string service = "bedrock";
};

// Adds `x-amz-date`, `x-amz-security-token` (temporary credentials) and `authorization` to
// `request`, signed at `now`.
void SignV4(http::HttpRequest& request, const CloudCredentials& credentials, const SigV4Scope& scope,
            std::chrono::system_clock::time_point now);

}  // namespace skillrunner::providers::aws
