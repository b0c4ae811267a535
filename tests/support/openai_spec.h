#pragma once

// JSON Schemas for chat-completions requests and responses. By default the
// project's own (tests/data/openai: what skillrunner sends, closed; what it
// reads). SKILLRUNNER_OPENAI_SPEC_DIR names a folder holding OpenAI's full
// schemas under the same file names instead; their `$schema` may say 2020-12
// while they use only draft-7 keywords, so it is dropped and they are checked
// as draft 7.

#include <boost/json/parse.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "services/validation/compiled_schema.h"

namespace skillrunner::test_support {

inline std::filesystem::path OpenAiSpecDir() {
  if (const char* dir = std::getenv("SKILLRUNNER_OPENAI_SPEC_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / "tests" / "data" / "openai";
}

// nullptr when the file is absent or does not compile.
inline std::shared_ptr<const validation::CompiledSchema> LoadOpenAiSpec(const std::string& file) {
  std::ifstream in(OpenAiSpecDir() / file);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  boost::json::value schema = boost::json::parse(text.str());
  schema.as_object().erase("$schema");
  auto compiled = validation::CompiledSchema::Compile(schema);
  return compiled ? *compiled : nullptr;
}

inline const validation::CompiledSchema* OpenAiRequestSchema() {
  static auto schema = LoadOpenAiSpec("chat_request.schema.json");
  return schema.get();
}

inline const validation::CompiledSchema* OpenAiResponseSchema() {
  static auto schema = LoadOpenAiSpec("chat_response.schema.json");
  return schema.get();
}

}  // namespace skillrunner::test_support
