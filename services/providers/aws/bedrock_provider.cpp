#include "services/providers/aws/bedrock_provider.h"

#include <boost/json/serialize.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include "services/common/clock.h"
#include "services/common/json_text.h"
#include "services/providers/aws/bedrock_answer.h"
#include "services/providers/aws/bedrock_stream.h"
#include "services/providers/aws/sigv4.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers::aws {
namespace json = boost::json;
namespace asio = boost::asio;

BedrockProvider::BedrockProvider(BedrockOptions options, std::shared_ptr<http::HttpClient> client, WallClock now)
    : options_(std::move(options)),
      client_(std::move(client)),
      now_(now ? std::move(now) : WallClock([] { return RealClock().WallNow(); })),
      credentials_(std::make_shared<CredentialCache>(AwsCredentialFetch(options_.credentials, client_), now_)) {
  if (options_.base_url.empty()) options_.base_url = "https://bedrock-runtime." + options_.region + ".amazonaws.com";
}

namespace {

json::array Messages(const ChatRequest& request, std::string& system) {
  json::array messages;
  for (const auto& m : request.messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    // Converse wants the roles to alternate: one role's turns in a row are one message.
    if (!messages.empty() && messages.back().as_object().at("role").as_string() == m.role) {
      json::object& last = messages.back().as_object()["content"].as_array().back().as_object();
      last["text"] = std::string(last["text"].as_string()) + "\n\n" + m.content;
      continue;
    }
    messages.push_back(json::object{{"role", m.role}, {"content", json::array{json::object{{"text", m.content}}}}});
  }
  return messages;
}

}  // namespace

json::object BedrockProvider::RequestBody(const ChatRequest& request) const {
  json::object body;
  std::string system;
  body["messages"] = Messages(request, system);
  if (!system.empty()) body["system"] = json::array{json::object{{"text", system}}};
  json::object inference{{"maxTokens", request.max_output_tokens}};
  if (request.temperature) inference["temperature"] = std::clamp(*request.temperature, 0.0, 1.0);
  body["inferenceConfig"] = std::move(inference);
  const ResponseFormat& format = request.response_format;
  if (format.kind == ResponseFormat::Kind::kJsonSchema) {
    json::object schema{{"schema", json::serialize(format.Schema())}, {"name", format.name}};
    body["outputConfig"] = json::object{
        {"textFormat", json::object{{"type", "json_schema"}, {"structure", json::object{{"jsonSchema", schema}}}}}};
  }
  if (format.kind == ResponseFormat::Kind::kTool) {
    json::object spec{{"name", format.name}, {"inputSchema", json::object{{"json", format.Schema()}}}};
    body["toolConfig"] = json::object{{"tools", json::array{json::object{{"toolSpec", std::move(spec)}}}},
                                      {"toolChoice", json::object{{"tool", json::object{{"name", format.name}}}}}};
  }
  return body;
}

asio::awaitable<ChatResult> BedrockProvider::Chat(const ChatRequest& request) {
  // The model id (an inference profile's ARN too) is one path segment: everything but the
  // unreserved characters percent-encoded, as the AWS SDKs send it.
  const std::string model = boost::urls::encode(request.model, boost::urls::unreserved_chars);
  const std::string path = "/model/" + model + (request.on_text ? "/converse-stream" : "/converse");
  ChatCall call{JoinUrl(options_.base_url, path), {}, "", "", ParseBedrockError, ParseBedrockResponse};
  if (request.on_text) {
    call.stream = MakeBedrockChatStream(request);
    call.stream_type = "application/vnd.amazon.eventstream";
  }
  call.sign =
      [this](http::HttpRequest& out) -> asio::awaitable<std::expected<std::vector<std::string>, ProviderError>> {
    auto credentials = co_await credentials_->Get();
    if (!credentials) co_return std::unexpected(std::move(credentials.error()));
    SignV4(out, *credentials, SigV4Scope{options_.region, "bedrock"}, now_());
    co_return credentials->Secrets();
  };
  const std::string no_env;
  EnvLookup none = [](std::string_view) { return std::optional<std::string>(); };
  KeySource source{none, no_env, options_.name, options_.base_url};
  co_return co_await PostChat(*client_, source, std::move(call), CompactJson(RequestBody(request)), request);
}

}  // namespace skillrunner::providers::aws
