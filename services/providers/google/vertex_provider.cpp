#include "services/providers/google/vertex_provider.h"

#include <boost/url/encode.hpp>
#include <boost/url/rfc/pchars.hpp>

#include "services/common/clock.h"
#include "services/common/json_text.h"
#include "services/providers/anthropic_answer.h"
#include "services/providers/anthropic_stream.h"
#include "services/providers/gemini_answer.h"
#include "services/providers/gemini_stream.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers::google {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

WallClock OrSystem(WallClock now) {
  return now ? std::move(now) : WallClock([] { return RealClock().WallNow(); });
}

EnvLookup NoEnv() {
  return [](std::string_view) { return std::optional<std::string>(); };
}

}  // namespace

VertexProvider::VertexProvider(VertexOptions options, std::shared_ptr<http::HttpClient> client, WallClock now)
    : options_(std::move(options)),
      client_(std::move(client)),
      gemini_(GeminiOptions{}, client_, NoEnv()),
      anthropic_(AnthropicOptions{}, client_, NoEnv()) {
  now = OrSystem(std::move(now));
  token_ = std::make_shared<CredentialCache>(GoogleTokenFetch(options_.credentials, client_, now), now);
  if (options_.base_url.empty()) {
    options_.base_url = options_.location == "global" ? "https://aiplatform.googleapis.com"
                                                      : "https://" + options_.location + "-aiplatform.googleapis.com";
  }
}

std::string_view VertexProvider::PublisherOf(std::string_view model) const {
  if (auto it = options_.publishers.find(model); it != options_.publishers.end()) return it->second;
  return model.starts_with("claude") ? "anthropic" : "google";
}

json::object VertexProvider::RequestBody(const ChatRequest& request) const {
  if (PublisherOf(request.model) == "google") return gemini_.RequestBody(request);
  json::object body = anthropic_.RequestBody(request);
  body.erase("model");  // the URL names it
  body["anthropic_version"] = "vertex-2023-10-16";
  return body;
}

asio::awaitable<ChatResult> VertexProvider::Chat(const ChatRequest& request) {
  const bool google = PublisherOf(request.model) == "google";
  const std::string model = boost::urls::encode(request.model, boost::urls::pchars);
  const std::string method = google ? (request.on_text ? ":streamGenerateContent?alt=sse" : ":generateContent")
                                    : (request.on_text ? ":streamRawPredict" : ":rawPredict");
  const std::string path = "/v1/projects/" + options_.project + "/locations/" + options_.location + "/publishers/" +
                           (google ? "google" : "anthropic") + "/models/" + model + method;
  ChatCall call{JoinUrl(options_.base_url, path),
                {},
                "",
                "",
                google ? ParseGeminiError : ParseAnthropicError,
                google ? ParseGeminiResponse : ParseAnthropicResponse};
  if (request.on_text) call.stream = google ? MakeGeminiChatStream(request) : MakeAnthropicChatStream(request);
  call.sign =
      [this](http::HttpRequest& out) -> asio::awaitable<std::expected<std::vector<std::string>, ProviderError>> {
    auto token = co_await token_->Get();
    if (!token) co_return std::unexpected(std::move(token.error()));
    out.headers.emplace_back("authorization", "Bearer " + token->secret);
    co_return token->Secrets();
  };
  const std::string no_env;
  EnvLookup none = NoEnv();
  KeySource source{none, no_env, options_.name, options_.base_url};
  co_return co_await PostChat(*client_, source, std::move(call), CompactJson(RequestBody(request)), request);
}

}  // namespace skillrunner::providers::google
