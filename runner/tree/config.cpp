#include "runner/tree/config.h"

#include <cmath>

#include "services/providers/simulated/fault_script.h"
#include "services/state/redis.h"

namespace skillrunner {
namespace json = boost::json;

std::optional<std::string> Config::ProviderFor(std::string_view model) const {
  if (provider_override) return default_provider;
  if (auto it = models.find(model); it != models.end()) return it->second.provider;
  if (!default_provider.empty()) return default_provider;
  return std::nullopt;
}

OutputMode Config::StructuredOutputFor(std::string_view model) const {
  if (auto it = models.find(model); it != models.end()) {
    return it->second.structured_output;
  }
  return OutputMode::kNone;
}

std::string Config::KindOf(std::string_view provider) const {
  auto it = providers.find(provider);
  return it == providers.end() ? std::string() : it->second.kind;
}

std::string VertexPublisher(std::string_view model, std::string_view configured) {
  if (!configured.empty()) return std::string(configured);
  return model.starts_with("claude") ? "anthropic" : "google";
}

std::string Config::DialectKindOf(std::string_view model) const {
  const std::string kind = KindOf(ProviderFor(model).value_or(""));
  if (kind == "bedrock") return "anthropic";
  if (kind != "vertex") return kind;
  auto it = models.find(model);
  return VertexPublisher(model, it == models.end() ? "" : it->second.publisher) == "google" ? "gemini" : "anthropic";
}

Config BuiltinConfig() {
  Config config;
  config.providers["simulated"] = ProviderConfig{"simulated", "simulated", "", "", {}};
  config.default_provider = "simulated";
  config.builtin = true;
  config.source = "(built-in)";
  return config;
}

namespace {

// Provider settings that only one kind takes.
constexpr std::pair<std::string_view, std::string_view> kKindKeys[] = {{"max_tokens_field", "openai"},
                                                                       {"auth_header", "openai"},
                                                                       {"query", "openai"},
                                                                       {"anthropic_version", "anthropic"},
                                                                       {"region", "bedrock"},
                                                                       {"profile", "bedrock"},
                                                                       {"project", "vertex"},
                                                                       {"location", "vertex"},
                                                                       {"credentials_file", "vertex"},
                                                                       {"faults", "simulated"},
                                                                       {"latency_ms", "simulated"},
                                                                       {"seed", "simulated"}};

// Every fallback and escalation is a model of the table, and not the model itself.
void CheckModelRoutes(const Config& config, const std::string& path, const YamlDocument& doc,
                      std::vector<Diagnostic>& problems) {
  for (const auto& entry : config.models) {
    // Named, not bound: clang 15 (the fuzz build) cannot capture a structured binding.
    const std::string& name = entry.first;
    const ModelConfig& model = entry.second;
    auto check = [&](const std::string& pointer, const std::string& other) {
      std::string why = other == name                   ? "a model cannot fall back or escalate to itself"
                        : config.models.contains(other) ? ""
                                                        : "unknown model \"" + other + "\" (not in the models table)";
      if (!why.empty()) problems.push_back({path, doc.positions.Find(pointer), pointer + ": " + why});
    };
    const std::string at = AppendPointer("/models", name);
    for (std::size_t i = 0; i < model.fallbacks.size(); ++i) {
      check(at + "/fallbacks/" + std::to_string(i), model.fallbacks[i]);
    }
    if (!model.escalate_to.empty()) check(at + "/escalate_to", model.escalate_to);
    for (std::size_t i = 0; i < model.on_refusal.size(); ++i) {
      check(at + "/on_refusal/" + std::to_string(i), model.on_refusal[i]);
    }
  }
}

struct KindDefaults {
  std::string_view base_url;
  std::string_view key_env;
  std::string_view base_url_env;
};

std::optional<KindDefaults> DefaultsFor(std::string_view kind) {
  if (kind == "openai") {
    return KindDefaults{"https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"};
  }
  if (kind == "anthropic") {
    return KindDefaults{"https://api.anthropic.com", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"};
  }
  if (kind == "gemini") {
    return KindDefaults{"https://generativelanguage.googleapis.com", "GEMINI_API_KEY", "GEMINI_BASE_URL"};
  }
  return std::nullopt;
}

std::string StringAt(const json::object& obj, std::string_view key) {
  if (auto* v = obj.if_contains(key); v && v->is_string()) return std::string(v->as_string());
  return {};
}

std::optional<double> NumberAt(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}

// `state:` and `tenants:` (shapes checked by the schema); the problem with
// state.redis, if it has one.
std::optional<std::string> ReadStateAndTenants(const json::object& state, const json::object& tenants, Config& config) {
  config.state.redis = StringAt(state, "redis");
  if (auto hint = NumberAt(state, "replicas_hint")) config.state.replicas_hint = static_cast<int>(*hint);
  if (auto ns = StringAt(state, "namespace"); !ns.empty()) config.state.key_namespace = ns;
  if (auto ms = NumberAt(state, "timeout_ms")) config.state.timeout = std::chrono::milliseconds(std::llround(*ms));
  for (const auto& [name, value] : tenants) {
    const json::object& t = value.as_object();
    std::optional<double> in_flight = NumberAt(t, "max_in_flight");
    config.tenants.emplace(
        std::string(name),
        TenantConfig{std::string(name), StringAt(t, "token_env"),
                     state::Quota{NumberAt(t, "requests_per_minute"),
                                  in_flight ? std::optional<int>(static_cast<int>(*in_flight)) : std::nullopt},
                     StringAt(t, "tls_subject")});
  }
  if (config.state.redis.empty()) return std::nullopt;
  auto url = state::ParseRedisUrl(config.state.redis);
  if (url) return std::nullopt;
  return "/state/redis: " + url.error().message;
}

// `telemetry:` (design.md §9.4; shapes checked by the schema).
TelemetryConfig ReadTelemetry(const json::object& telemetry) {
  TelemetryConfig out;
  out.otlp_endpoint = StringAt(telemetry, "otlp_endpoint");
  out.service_name = StringAt(telemetry, "service_name");
  if (const auto* capture = telemetry.if_contains("capture_content"); capture && capture->is_bool()) {
    out.capture_content = capture->get_bool();
  }
  return out;
}

// bedrock and vertex (design.md §11.5): the region, project and location their URLs are made of,
// and those URLs, unless base_url (or AWS_ENDPOINT_URL_BEDROCK_RUNTIME) points elsewhere.
std::optional<std::string> ReadCloud(ProviderConfig& provider, const EnvLookup& env) {
  json::object& settings = provider.settings;
  if (provider.kind == "bedrock") {
    std::string region = StringAt(settings, "region");
    for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
      if (region.empty()) region = env(name).value_or("");
    }
    if (region.empty()) return "a bedrock provider needs a region (region:, else AWS_REGION or AWS_DEFAULT_REGION)";
    settings["region"] = region;
    if (auto over = env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME"); over && !over->empty()) provider.base_url = *over;
    if (provider.base_url.empty()) provider.base_url = "https://bedrock-runtime." + region + ".amazonaws.com";
  } else if (provider.kind == "vertex") {
    const std::string project = StringAt(settings, "project");
    if (project.empty()) return "a vertex provider needs its Google Cloud project (project:)";
    std::string location = StringAt(settings, "location");
    if (location.empty()) settings["location"] = location = "us-central1";
    if (provider.base_url.empty()) {
      provider.base_url = location == "global" ? "https://aiplatform.googleapis.com"
                                               : "https://" + location + "-aiplatform.googleapis.com";
    }
  }
  return std::nullopt;
}

// One entry of `providers:`, with its kind's defaults and the environment's
// base URL; settings of another kind and a bad fault script are problems.
ProviderConfig ReadProvider(std::string_view name, const json::object& p, const EnvLookup& env, const std::string& path,
                            const YamlDocument& doc, std::vector<Diagnostic>& problems) {
  ProviderConfig provider{std::string(name), StringAt(p, "kind"), StringAt(p, "base_url"), StringAt(p, "api_key_env"),
                          p};
  if (auto defaults = DefaultsFor(provider.kind)) {
    if (auto over = env(defaults->base_url_env); over && !over->empty()) {
      provider.base_url = *over;
    } else if (provider.base_url.empty()) {
      provider.base_url = defaults->base_url;
    }
    if (provider.api_key_env.empty()) provider.api_key_env = defaults->key_env;
  }
  const std::string at = AppendPointer("/providers", name);
  if (auto problem = ReadCloud(provider, env)) problems.push_back({path, doc.positions.Find(at), at + ": " + *problem});
  for (const auto& [key, kind] : kKindKeys) {
    if (p.contains(key) && provider.kind != kind) {
      std::string pointer = AppendPointer(at, key);
      problems.push_back({path, doc.positions.FindKey(pointer),
                          pointer + ": only " + std::string(kind) + " providers take \"" + std::string(key) +
                              "\" (this one is " + provider.kind + ")"});
    }
  }
  if (auto* faults = p.if_contains("faults"); faults && provider.kind == "simulated") {
    auto script = providers::ParseFaultScript(*faults, providers::FaultScriptScope::kConfig);
    if (!script) {
      auto placed = PlaceUnder(AppendPointer(at, "faults"), script.error().message);
      problems.push_back({path, doc.positions.Find(placed.pointer), placed.pointer + ": " + placed.message});
    }
  }
  return provider;
}

// design.md §11.6: a bedrock or vertex model's structured output when the table does not say, by
// its id: native for the models whose strict mode is known, tool for other Claude models (Bedrock's
// tool use, Vertex's Anthropic publisher), else the validation loop.
OutputMode CloudDefaultMode(std::string_view kind, std::string_view id, std::string_view publisher) {
  if (kind == "bedrock") {
    // Inference profiles put a geography first: us.anthropic..., global.anthropic...
    std::string_view bare = id;
    if (std::size_t at = bare.find("anthropic."); at != std::string_view::npos) bare = bare.substr(at);
    for (std::string_view prefix : {"anthropic.claude-sonnet-4-5", "anthropic.claude-haiku-4-5",
                                    "anthropic.claude-opus-4-5", "anthropic.claude-opus-4-6"}) {
      if (bare.starts_with(prefix)) return OutputMode::kNative;
    }
    return bare.starts_with("anthropic.claude") ? OutputMode::kTool : OutputMode::kNone;
  }
  if (kind == "vertex") {
    if (VertexPublisher(id, publisher) == "anthropic") return OutputMode::kTool;
    for (std::string_view prefix : {"gemini-2.5", "gemini-3"}) {
      if (id.starts_with(prefix)) return OutputMode::kNative;
    }
  }
  return OutputMode::kNone;
}

// One entry of `models:`; a provider the config does not define is a problem.
ModelConfig ReadModel(std::string_view name, const json::object& m, const Config& config, const std::string& path,
                      const YamlDocument& doc, std::vector<Diagnostic>& problems) {
  ModelConfig model{std::string(name),
                    StringAt(m, "provider"),
                    ParseOutputMode(StringAt(m, "structured_output")).value_or(OutputMode::kNone),
                    {},
                    {},
                    {}};
  if (!config.providers.contains(model.provider)) {
    std::string pointer = AppendPointer(AppendPointer("/models", name), "provider");
    problems.push_back({path, doc.positions.Find(pointer), pointer + ": unknown provider \"" + model.provider + "\""});
  }
  if (auto* list = m.if_contains("fallbacks"); list && list->is_array()) {
    for (const auto& fallback : list->as_array()) model.fallbacks.emplace_back(fallback.as_string());
  }
  if (auto* list = m.if_contains("on_refusal"); list && list->is_array()) {
    for (const auto& other : list->as_array()) model.on_refusal.emplace_back(other.as_string());
  }
  model.escalate_to = StringAt(m, "escalate_to");
  model.publisher = StringAt(m, "publisher");
  const std::string kind = config.KindOf(model.provider);
  if (!model.publisher.empty() && kind != "vertex") {
    std::string pointer = AppendPointer(AppendPointer("/models", name), "publisher");
    problems.push_back(
        {path, doc.positions.FindKey(pointer), pointer + ": only models of vertex providers take a publisher"});
  }
  if (!m.contains("structured_output")) model.structured_output = CloudDefaultMode(kind, name, model.publisher);
  if (auto* price = m.if_contains("price"); price && price->is_object()) {
    const json::object& p = price->as_object();
    model.price =
        Price{NumberAt(p, "input").value_or(0), NumberAt(p, "cached_input"), NumberAt(p, "output").value_or(0),
              NumberAt(p, "cache_write"),       NumberAt(p, "batch_input"),  NumberAt(p, "batch_output")};
  }
  return model;
}

// A vertex provider learns each of its models' publishers (the URL and the body depend on it).
void AddVertexPublishers(Config& config) {
  for (const auto& [name, model] : config.models) {
    auto provider = config.providers.find(model.provider);
    if (provider == config.providers.end() || provider->second.kind != "vertex") continue;
    json::value& publishers = provider->second.settings["publishers"];
    if (!publishers.is_object()) publishers = json::object();
    publishers.as_object()[name] = VertexPublisher(name, model.publisher);
  }
}

}  // namespace

std::expected<Config, std::vector<Diagnostic>> LoadConfig(const std::string& path, const EnvLookup& env) {
  auto doc = LoadYamlFile(path);
  if (!doc) return std::unexpected(std::vector<Diagnostic>{doc.error()});
  if (doc->value.is_null()) {
    // Nothing but comments (or nothing): the same as no file, said once.
    Config config = BuiltinConfig();
    config.source = path;
    config.warnings.push_back({path,
                               {},
                               "the config holds no settings (empty or only comments): the built-in defaults apply, "
                               "as with no file (only the simulated provider)",
                               Diagnostic::Severity::kWarning,
                               "config-empty"});
    return config;
  }
  std::vector<Diagnostic> problems = CheckAgainstEmbeddedSchema(*doc, path, "config.schema.json");
  if (!problems.empty()) return std::unexpected(problems);
  Config config;
  config.source = path;
  const json::object empty;
  const json::object& root = doc->value.is_object() ? doc->value.as_object() : empty;
  auto section = [&](std::string_view key) -> const json::object& {
    auto* v = root.if_contains(key);
    return v && v->is_object() ? v->as_object() : empty;
  };
  for (const auto& [name, value] : section("providers")) {
    config.providers.emplace(std::string(name), ReadProvider(name, value.as_object(), env, path, *doc, problems));
  }
  for (const auto& [name, value] : section("models")) {
    ModelConfig model = ReadModel(name, value.as_object(), config, path, *doc, problems);
    config.models.emplace(model.name, std::move(model));
  }
  AddVertexPublishers(config);
  CheckModelRoutes(config, path, *doc, problems);
  for (const auto& [name, value] : section("rate_limits")) {
    if (!config.providers.contains(name)) {
      std::string pointer = AppendPointer("/rate_limits", name);
      problems.push_back(
          {path, doc->positions.FindKey(pointer), pointer + ": unknown provider \"" + std::string(name) + "\""});
      continue;
    }
    const json::object& limit = value.as_object();
    config.rate_limits.emplace(std::string(name), state::RateLimit{NumberAt(limit, "requests_per_minute"),
                                                                   NumberAt(limit, "tokens_per_minute")});
  }
  if (auto bad = ReadStateAndTenants(section("state"), section("tenants"), config)) {
    problems.push_back({path, doc->positions.Find("/state/redis"), *bad});
  }
  config.telemetry = ReadTelemetry(section("telemetry"));
  if (const json::value* admins = section("tls").if_contains("admin_subjects"); admins && admins->is_array()) {
    for (const json::value& subject : admins->as_array()) config.tls_admin_subjects.emplace_back(subject.as_string());
  }
  config.default_provider = StringAt(root, "default_provider");
  config.history = StringAt(root, "history");
  if (auto places = NumberAt(root, "handler_concurrency")) config.handler_concurrency = static_cast<int>(*places);
  if (!config.default_provider.empty() && !config.providers.contains(config.default_provider)) {
    problems.push_back({path, doc->positions.Find("/default_provider"),
                        "/default_provider: unknown provider \"" + config.default_provider + "\""});
  }
  StampCode(problems, 0, "config-invalid");
  if (!problems.empty()) return std::unexpected(problems);
  return config;
}

Result<void> ApplyProviderOverride(Config& config, const std::string& name) {
  if (!config.providers.contains(name)) {
    if (name != "simulated") {
      return Fail(ErrorCode::kConfigInvalid, "--provider: unknown provider \"" + name + "\" (the config " +
                                                 config.source + " defines none by that name)");
    }
    config.providers[name] = ProviderConfig{name, "simulated", "", "", {}};
  }
  config.default_provider = name;
  config.provider_override = true;
  return {};
}

}  // namespace skillrunner
