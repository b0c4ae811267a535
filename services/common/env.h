#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner {

// Looks up an environment variable (API keys, *_BASE_URL). Injected so that
// tests never read the real environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// The process environment.
std::optional<std::string> ProcessEnv(std::string_view name);

}  // namespace skillrunner
