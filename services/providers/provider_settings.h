#pragma once

#include <boost/json/object.hpp>
#include <functional>
#include <map>
#include <string>

namespace skillrunner::providers {

// One entry of the config's `providers:` (design.md §6.2), as the core checked it.
struct ProviderSettings {
  std::string name;
  std::string kind;              // openai | anthropic | simulated
  std::string base_url;          // defaulted per kind; *_BASE_URL env overrides
  std::string api_key_env;       // defaulted per kind; the key itself is never stored
  boost::json::object settings;  // every key as written, for provider kinds
};

using ProviderSettingsMap = std::map<std::string, ProviderSettings, std::less<>>;

}  // namespace skillrunner::providers
