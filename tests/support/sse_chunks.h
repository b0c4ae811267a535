#pragma once

// OpenAI chat.completion.chunk event streams for streaming tests.

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <vector>

namespace skillrunner::test_support {

// The streaming tests' skill: a loop-mode (model m-loop) triage whose
// category is an enum, so a wrong one is a verdict that cannot change.
inline constexpr const char* kStreamedTriageSkill = R"(id: triage
template_type: LLM_JSON_GENERATION
model: m-loop
prompt: { user: "Triage: {{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [category, title]
  additionalProperties: false
  properties:
    category: { enum: [bug, feature] }
    title: { type: string }
)";

// One `data:` event whose delta carries `content`.
inline std::string OpenAiContentEvent(const std::string& content) {
  boost::json::object delta{{"content", content}};
  boost::json::object chunk{
      {"id", "chatcmpl-s"},
      {"object", "chat.completion.chunk"},
      {"model", "test-model"},
      {"choices", boost::json::array{boost::json::object{{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}}}}};
  return "data: " + boost::json::serialize(chunk) + "\n\n";
}

// The whole stream of an answer sent as `pieces`, then finish_reason stop,
// a usage chunk (unless `usage` is false) and [DONE].
inline std::string OpenAiStream(const std::vector<std::string>& pieces, int prompt_tokens = 30,
                                int completion_tokens = 12, bool usage = true) {
  std::string out;
  for (const std::string& piece : pieces) out += OpenAiContentEvent(piece);
  out += R"(data: {"id":"chatcmpl-s","object":"chat.completion.chunk","model":"test-model",)"
         R"("choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
         "\n\n";
  if (usage) {
    out += R"(data: {"id":"chatcmpl-s","object":"chat.completion.chunk","model":"test-model","choices":[],)"
           R"("usage":{"prompt_tokens":)" +
           std::to_string(prompt_tokens) + R"(,"completion_tokens":)" + std::to_string(completion_tokens) +
           R"(,"total_tokens":)" + std::to_string(prompt_tokens + completion_tokens) + "}}\n\n";
  }
  return out + "data: [DONE]\n\n";
}

}  // namespace skillrunner::test_support
