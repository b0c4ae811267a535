#pragma once

// OpenAI's own JSON Schemas for chat-completions requests and responses, from
// ../shared/spec (never copied into the project). Their `$schema` says
// 2020-12; they use only draft-7 keywords, so they are checked as draft 7.

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "services/validation/compiled_schema.h"

namespace skillrunner::test_support {

inline std::filesystem::path SharedSpecDir() {
  return std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / ".." / "shared" / "spec";
}

// nullptr when ../shared/spec is absent (tests then GTEST_SKIP with a message).
inline std::shared_ptr<const validation::CompiledSchema> LoadOpenAiSpec(const std::string& file) {
  std::ifstream in(SharedSpecDir() / file);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  boost::json::value schema = boost::json::parse(text.str());
  schema.as_object().erase("$schema");
  auto compiled = validation::CompiledSchema::Compile(schema);
  return compiled ? *compiled : nullptr;
}

inline const validation::CompiledSchema* OpenAiRequestSchema() {
  static auto schema = LoadOpenAiSpec("openai_chat_request.schema.json");
  return schema.get();
}

inline const validation::CompiledSchema* OpenAiResponseSchema() {
  static auto schema = LoadOpenAiSpec("openai_chat_response.schema.json");
  return schema.get();
}

#define SKILLRUNNER_SKIP_WITHOUT_SPEC()                                                  \
  if (::skillrunner::test_support::OpenAiRequestSchema() == nullptr) {                  \
    GTEST_SKIP() << "../shared/spec is absent: the OpenAI spec checks need it (CI has it)"; \
  }

}  // namespace skillrunner::test_support
