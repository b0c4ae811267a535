#pragma once

#include <memory>
#include <string>

#include "services/common/env.h"
#include "services/http/http_client.h"
#include "services/providers/aws/aws_credentials.h"
#include "services/providers/provider.h"

namespace skillrunner::providers::aws {

struct BedrockOptions {
  std::string name = "bedrock";
  std::string region;
  std::string base_url;  // default https://bedrock-runtime.{region}.amazonaws.com
  AwsChain credentials;
};

// The `bedrock` kind (design.md §11.5): POST {base_url}/model/{modelId}/converse (converse-stream
// when the caller streams), signed with SigV4 by the credential chain's credentials. System turns go
// to `system`, the rest to `messages` (one role's consecutive turns merged); `inferenceConfig` carries
// maxTokens and temperature; native structured output is `outputConfig.textFormat` (the schema as a
// JSON string), tool mode one forced tool.
class BedrockProvider : public Provider {
 public:
  BedrockProvider(BedrockOptions options, std::shared_ptr<http::HttpClient> client, WallClock now = {});

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  boost::json::object RequestBody(const ChatRequest& request) const;

 private:
  BedrockOptions options_;
  std::shared_ptr<http::HttpClient> client_;
  WallClock now_;
  std::shared_ptr<CredentialCache> credentials_;
};

}  // namespace skillrunner::providers::aws
