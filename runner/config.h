#pragma once

#include <boost/json/object.hpp>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/diagnostic.h"

namespace skillrunner {

// One entry of `providers:` (DESIGN §6.2).
struct ProviderConfig {
  std::string name;
  std::string kind;         // openai | anthropic | simulated
  std::string base_url;     // defaulted per kind; *_BASE_URL env overrides
  std::string api_key_env;  // defaulted per kind; the key itself is never stored
  boost::json::object settings;  // every key as written, for provider kinds
};

// One entry of `models:`.
struct ModelConfig {
  std::string name;
  std::string provider;
  std::string structured_output = "none";  // native | json_object | none
};

// The checked `skillrunner.yaml`. Immutable after loading.
struct Config {
  std::map<std::string, ProviderConfig, std::less<>> providers;
  std::map<std::string, ModelConfig, std::less<>> models;
  std::string default_provider;  // may be empty: unknown models are errors
  std::string source;            // the file it came from, or "(built-in)"
  bool provider_override = false;  // --provider: every model goes to default_provider

  // The provider a model runs on: its models-table entry, else the default
  // provider; nullopt when neither applies.
  std::optional<std::string> ProviderFor(std::string_view model) const;
  // native | json_object | none for the model ("none" when not in the
  // table). Kept under --provider: the simulated provider takes every mode.
  std::string StructuredOutputFor(std::string_view model) const;
};

// The config used when neither --config nor ./skillrunner.yaml exists: only
// the simulated provider, which is also the default.
Config BuiltinConfig();

// Loads and checks a config file; every problem is a diagnostic with a
// position. `env` looks up environment variables (OPENAI_BASE_URL, ...).
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;
std::expected<Config, std::vector<Diagnostic>> LoadConfig(const std::string& path,
                                                          const EnvLookup& env);

// Routes every model to the provider named `name` (a name from `providers:` or
// a kind: "simulated" adds a simulated provider if the config has none).
std::expected<void, std::string> ApplyProviderOverride(Config& config,
                                                       const std::string& name);

// The process environment.
std::optional<std::string> ProcessEnv(std::string_view name);

}  // namespace skillrunner
