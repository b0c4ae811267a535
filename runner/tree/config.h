#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/tree/diagnostic.h"
#include "services/common/env.h"
#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/providers/provider_settings.h"
#include "services/state/limiter.h"
#include "services/state/tenant_quota.h"

namespace skillrunner {

// One entry of `providers:` (design.md §6.2): the providers' own settings.
using ProviderConfig = providers::ProviderSettings;

// One entry of `models:`.
struct ModelConfig {
  std::string name;
  std::string provider;
  OutputMode structured_output = OutputMode::kNone;
  std::vector<std::string> fallbacks;        // design.md §9.3: tried in order when the transient budget is spent
  std::string escalate_to;                   // one more generation after MAX_RETRIES_EXCEEDED
  std::optional<Price> price;                // design.md §9.4: USD per million tokens
  std::vector<std::string> on_refusal = {};  // design.md §11.5: tried in order after REFUSED or CONTENT_FILTERED
  std::string publisher = {};                // vertex: google | anthropic (default: anthropic for claude*)
};

// `state:` (design.md §9.6): where limits, quotas and session memory live.
struct StateConfig {
  std::string redis;  // empty: in this process
  int replicas_hint = 1;
  std::string key_namespace = "skillrunner";
  std::chrono::milliseconds timeout{100};
};

// `telemetry:` (design.md §9.4): where traces go.
struct TelemetryConfig {
  std::string otlp_endpoint;  // base URL; empty: OTEL_EXPORTER_OTLP_ENDPOINT, else no export
  std::string service_name;   // empty: OTEL_SERVICE_NAME, else "skillrunner"
  bool capture_content = false;
};

// One entry of `tenants:`: a TCP token (read from `token_env` when serve
// starts) with its quota.
struct TenantConfig {
  std::string name;
  std::string token_env;  // empty: the tenant is known by its client certificate only
  state::Quota quota;
  std::string tls_subject = {};  // design.md §11.8: its client certificate's subject (RFC 2253)
};

// The checked `skillrunner.yaml`. Immutable after loading.
struct Config {
  providers::ProviderSettingsMap providers;
  std::map<std::string, ModelConfig, std::less<>> models;
  std::string default_provider;  // may be empty: unknown models are errors
  // `history:`: the eval history (a file or a postgresql:// URL); empty: each command's default.
  std::string history;
  // `handler_concurrency:`: child processes at once per eval or serve; unset: the usable cores.
  std::optional<int> handler_concurrency;
  // `rate_limits:` per provider name (a start and a ceiling).
  std::map<std::string, state::RateLimit, std::less<>> rate_limits;
  StateConfig state;
  std::map<std::string, TenantConfig, std::less<>> tenants;
  // `tls.admin_subjects`: client certificates (RFC 2253 subjects) that are the admin (design.md §12.1).
  std::vector<std::string> tls_admin_subjects;
  TelemetryConfig telemetry;
  std::string source;              // the file it came from, or "(built-in)"
  bool provider_override = false;  // --provider: every model goes to default_provider
  // No config file: every model runs on the simulator by design, so a model
  // missing from the (empty) table is worth no warning.
  bool builtin = false;
  // What loading it found worth a word without refusing it (config-empty); the tree's
  // load reports them with its own.
  std::vector<Diagnostic> warnings;

  // The provider a model runs on: its models-table entry, else the default
  // provider; nullopt when neither applies.
  std::optional<std::string> ProviderFor(std::string_view model) const;
  // The model's structured output (kNone when not in the table). Kept under
  // --provider: the simulated provider takes every mode.
  OutputMode StructuredOutputFor(std::string_view model) const;
  // The kind of the provider `name` ("" when the config has none).
  std::string KindOf(std::string_view provider) const;
  // Whose strict mode the model's requests meet: its provider's kind, but for bedrock (Claude's
  // rules: anthropic) and vertex (the publisher's: gemini or anthropic).
  std::string DialectKindOf(std::string_view model) const;
};

// A vertex model's publisher: the table's `publisher`, else anthropic for claude* ids, else google.
std::string VertexPublisher(std::string_view model, std::string_view configured);

// The config used when neither --config nor ./skillrunner.yaml exists: only
// the simulated provider, which is also the default.
Config BuiltinConfig();

// Loads and checks a config file; every problem is a diagnostic with a
// position. `env` looks up environment variables (OPENAI_BASE_URL, ...). A
// file that is empty or holds only comments is BuiltinConfig(), with a
// config-empty warning.
std::expected<Config, std::vector<Diagnostic>> LoadConfig(const std::string& path, const EnvLookup& env);

// Routes every model to the provider named `name` (a name from `providers:` or
// a kind: "simulated" adds a simulated provider if the config has none).
Result<void> ApplyProviderOverride(Config& config, const std::string& name);

}  // namespace skillrunner
