#pragma once

// A tree whose one skill, `name`, asks an OpenAI server at `base_url` (a loopback fake) for {name},
// with the key in TEST_LLM_KEY: the rate-limit and Retry-After tests of whole processes.

#include <filesystem>
#include <string>

#include "tests/support/temp_tree.h"

namespace skillrunner::testing {

inline void WriteNameSkillTree(const TempTree& tree, const std::string& base_url) {
  tree.Write("skillrunner.yaml", "providers:\n  openai: { kind: openai, base_url: \"" + base_url +
                                     "/v1\", api_key_env: TEST_LLM_KEY }\n"
                                     "models:\n  gpt-test: { provider: openai, structured_output: native }\n");
  tree.Write("skills/name/skill.yaml", R"(id: name
model: gpt-test
template_type: LLM_JSON_GENERATION
input_schema: { type: object }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
prompt: { user: "Say a name." }
)");
  std::filesystem::create_directories(tree.Path("rubrics"));
}

}  // namespace skillrunner::testing
