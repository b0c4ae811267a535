#pragma once

// The skillrunner.yaml of the CLI tests that check a tree as a new user
// writes it: an OpenAI model at an address nobody answers (nothing is sent:
// the tests validate) and a simulated one.

namespace skillrunner::testing {

inline constexpr const char* kCliTestConfig = R"(providers:
  openai: { kind: openai, base_url: "http://127.0.0.1:9/v1" }
  sim: { kind: simulated }
models:
  gpt-4o-mini: { provider: openai, structured_output: native }
  local-sim: { provider: sim, structured_output: none }
)";

}  // namespace skillrunner::testing
