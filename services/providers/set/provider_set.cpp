#include "services/providers/set/provider_set.h"

#include <optional>
#include <tuple>

#include "services/http/http_client.h"
#include "services/providers/anthropic_answer.h"
#include "services/providers/anthropic_provider.h"
#include "services/providers/aws/bedrock_provider.h"
#include "services/providers/batch/anthropic_batch_api.h"
#include "services/providers/batch/gemini_batch_api.h"
#include "services/providers/batch/openai_batch_api.h"
#include "services/providers/gemini_answer.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/google/vertex_provider.h"
#include "services/providers/http_errors.h"
#include "services/providers/limited_provider.h"
#include "services/providers/openai_provider.h"
#include "services/providers/simulated/simulated_provider.h"
#include "services/state/request_limiter.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

std::int64_t IntSetting(const json::object& settings, std::string_view key, std::int64_t fallback) {
  auto* v = settings.if_contains(key);
  return v && v->is_int64() ? v->as_int64() : fallback;
}

http::HttpClientOptions HttpOptions(const json::object& settings) {
  http::HttpClientOptions options = http::WithProxyFromEnvironment({});
  options.max_connections_per_host = static_cast<std::size_t>(
      IntSetting(settings, "max_connections_per_host", static_cast<std::int64_t>(options.max_connections_per_host)));
  options.connect_timeout =
      std::chrono::milliseconds(IntSetting(settings, "connect_timeout_ms", options.connect_timeout.count()));
  options.max_response_bytes = static_cast<std::size_t>(
      IntSetting(settings, "max_response_bytes", static_cast<std::int64_t>(options.max_response_bytes)));
  if (auto* v = settings.if_contains("tls_verify"); v && v->is_bool()) options.tls_verify = v->as_bool();
  if (auto* v = settings.if_contains("ca_file"); v && v->is_string()) {
    options.ca_file = std::string(v->as_string());
  }
  return options;
}

// Entries that share an account: the same kind, base URL and key variable.
std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> Accounts(
    const ProviderSettingsMap& providers) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> accounts;
  for (const auto& [name, provider] : providers) {
    if (provider.kind == "simulated") continue;  // a local fake: nothing to pace
    accounts[{provider.kind, provider.base_url, provider.api_key_env}].push_back(name);
  }
  return accounts;
}

}  // namespace

state::RateLimit AccountLimit(const std::map<std::string, state::RateLimit, std::less<>>& limits,
                              const std::vector<std::string>& entries) {
  auto smallest = [](std::optional<double>& into, const std::optional<double>& value) {
    if (value && (!into || *value < *into)) into = value;
  };
  state::RateLimit out;
  for (const std::string& name : entries) {
    auto it = limits.find(name);
    if (it == limits.end()) continue;
    smallest(out.requests_per_minute, it->second.requests_per_minute);
    smallest(out.tokens_per_minute, it->second.tokens_per_minute);
  }
  return out;
}

static OpenAiOptions OpenAiOptionsFor(const std::string& name, const ProviderSettings& provider) {
  const json::object& settings = provider.settings;
  OpenAiOptions options;
  options.name = name;
  options.base_url = provider.base_url;
  options.api_key_env = provider.api_key_env;
  if (auto* v = settings.if_contains("max_tokens_field"); v && v->is_string()) {
    options.max_tokens_field = std::string(v->as_string());
  }
  if (auto* v = settings.if_contains("auth_header"); v && v->is_string()) {
    options.auth_header = std::string(v->as_string());
  }
  if (auto* v = settings.if_contains("query"); v && v->is_object()) {
    for (const auto& [key, value] : v->as_object()) {
      if (value.is_string()) options.query.emplace_back(std::string(key), std::string(value.as_string()));
    }
  }
  return options;
}

static AnthropicOptions AnthropicOptionsFor(const std::string& name, const ProviderSettings& provider) {
  AnthropicOptions options;
  options.name = name;
  options.base_url = provider.base_url;
  options.api_key_env = provider.api_key_env;
  if (auto* v = provider.settings.if_contains("anthropic_version"); v && v->is_string()) {
    options.anthropic_version = std::string(v->as_string());
  }
  return options;
}

static GeminiOptions GeminiOptionsFor(const std::string& name, const ProviderSettings& provider) {
  GeminiOptions options;
  options.name = name;
  options.base_url = provider.base_url;
  options.api_key_env = provider.api_key_env;
  return options;
}

// bedrock: the region, and the credential chain as the environment and files say now.
static Result<std::shared_ptr<Provider>> MakeBedrock(const std::string& name, const ProviderSettings& provider,
                                                     std::shared_ptr<http::HttpClient> client, const EnvLookup& env) {
  aws::BedrockOptions options;
  options.name = name;
  options.region = JsonString(provider.settings, "region");
  options.base_url = provider.base_url;
  auto chain = aws::ResolveAwsChain(env, options.region, JsonString(provider.settings, "profile"));
  if (!chain) return std::unexpected(std::move(chain.error()));
  options.credentials = std::move(*chain);
  return std::make_shared<aws::BedrockProvider>(std::move(options), std::move(client));
}

// vertex: the project, location, credentials and each model's publisher.
static Result<std::shared_ptr<Provider>> MakeVertex(const std::string& name, const ProviderSettings& provider,
                                                    std::shared_ptr<http::HttpClient> client, const EnvLookup& env) {
  google::VertexOptions options;
  options.name = name;
  options.project = JsonString(provider.settings, "project");
  options.location = JsonString(provider.settings, "location", options.location);
  options.base_url = provider.base_url;
  auto source = google::ResolveGoogleSource(env, JsonString(provider.settings, "credentials_file"));
  if (!source) return std::unexpected(std::move(source.error()));
  options.credentials = std::move(*source);
  if (auto* publishers = provider.settings.if_contains("publishers"); publishers && publishers->is_object()) {
    for (const auto& [model, publisher] : publishers->as_object()) {
      if (publisher.is_string()) options.publishers[std::string(model)] = std::string(publisher.as_string());
    }
  }
  return std::make_shared<google::VertexProvider>(std::move(options), std::move(client));
}

std::shared_ptr<BatchApi> MakeBatchApi(const std::string& name, const ProviderSettings& provider,
                                       boost::asio::any_io_executor executor, EnvLookup env) {
  auto client = http::MakeHttpClient(executor, HttpOptions(provider.settings));
  if (provider.kind == "openai") {
    OpenAiOptions options = OpenAiOptionsFor(name, provider);
    const bool bearer = options.auth_header == "authorization";
    BatchEndpoint endpoint{client,
                           env,
                           options.api_key_env,
                           options.name,
                           options.base_url,
                           options.auth_header,
                           bearer ? "Bearer " : "",
                           {},
                           options.query,
                           ParseOpenAiError};
    return std::make_shared<OpenAiBatchApi>(std::move(endpoint), OpenAiProvider(options, client, env));
  }
  if (provider.kind == "anthropic") {
    AnthropicOptions options = AnthropicOptionsFor(name, provider);
    BatchEndpoint endpoint{client,
                           env,
                           options.api_key_env,
                           options.name,
                           options.base_url,
                           "x-api-key",
                           "",
                           {{"anthropic-version", options.anthropic_version}},
                           {},
                           ParseAnthropicError};
    return std::make_shared<AnthropicBatchApi>(std::move(endpoint), AnthropicProvider(options, client, env));
  }
  if (provider.kind == "gemini") {
    GeminiOptions options = GeminiOptionsFor(name, provider);
    BatchEndpoint endpoint{client, env, options.api_key_env, options.name, options.base_url, "x-goog-api-key", "",
                           {},     {},  ParseGeminiError};
    return std::make_shared<GeminiBatchApi>(std::move(endpoint), GeminiProvider(options, client, env));
  }
  return nullptr;
}

Result<std::unique_ptr<ProviderSet>> ProviderSet::Create(const ProviderSettingsMap& providers,
                                                         boost::asio::any_io_executor executor, EnvLookup env,
                                                         Clock& clock, LimiterFactory limiters) {
  auto set = std::unique_ptr<ProviderSet>(new ProviderSet());
  for (const auto& [name, provider] : providers) {
    const json::object& settings = provider.settings;
    if (provider.kind == "simulated") {
      auto simulated = MakeSimulatedProvider(settings);
      if (!simulated) return Fail(std::move(simulated.error()), "provider \"" + name + "\"");
      set->providers_[name] = *simulated;
      set->simulated_.push_back(*simulated);
    } else if (provider.kind == "openai") {
      set->providers_[name] = std::make_shared<OpenAiProvider>(
          OpenAiOptionsFor(name, provider), http::MakeHttpClient(executor, HttpOptions(settings)), env);
    } else if (provider.kind == "gemini") {
      set->providers_[name] = std::make_shared<GeminiProvider>(
          GeminiOptionsFor(name, provider), http::MakeHttpClient(executor, HttpOptions(settings)), env);
    } else if (provider.kind == "anthropic") {
      set->providers_[name] = std::make_shared<AnthropicProvider>(
          AnthropicOptionsFor(name, provider), http::MakeHttpClient(executor, HttpOptions(settings)), env);
    } else if (provider.kind == "bedrock" || provider.kind == "vertex") {
      auto client = http::MakeHttpClient(executor, HttpOptions(settings));
      auto made = provider.kind == "bedrock" ? MakeBedrock(name, provider, client, env)
                                             : MakeVertex(name, provider, client, env);
      if (!made) return Fail(std::move(made.error()), "provider \"" + name + "\"");
      set->providers_[name] = std::move(*made);
    } else {
      return Fail(ErrorCode::kConfigInvalid, "provider \"" + name + "\": unknown kind \"" + provider.kind + "\"");
    }
  }
  for (const auto& [account, names] : Accounts(providers)) {
    std::shared_ptr<state::Limiter> limiter =
        limiters ? limiters(names) : std::make_shared<state::RequestLimiter>(state::RateLimit{}, clock);
    for (const std::string& name : names) {
      std::shared_ptr<Provider>& provider = set->providers_.at(name);
      provider = std::make_shared<LimitedProvider>(provider, limiter, clock);
    }
  }
  return set;
}

void ProviderSet::SetSkillSimulations(const std::map<std::string, SkillSimulation, std::less<>>& skills) {
  for (const auto& simulated : simulated_) simulated->SetSkillSimulations(skills);
}

Provider* ProviderSet::Find(std::string_view name) const {
  auto it = providers_.find(name);
  return it == providers_.end() ? nullptr : it->second.get();
}

}  // namespace skillrunner::providers
