#include "services/generation/prompt_builder.h"

#include <boost/json/serialize.hpp>

namespace skillrunner::generation {

std::string ShownPointer(const std::string& pointer) { return pointer.empty() ? "(root)" : pointer; }

std::vector<providers::ChatMessage> FirstMessages(const std::string& system, const std::string& user,
                                                  const std::string* schema_in_prompt,
                                                  const std::vector<std::string>& avoid) {
  std::string system_text = system;
  auto add = [&](const std::string& part) {
    if (!system_text.empty()) system_text += "\n\n";
    system_text += part;
  };
  if (schema_in_prompt != nullptr) {
    add("Answer with one JSON value only (no prose, no Markdown code fence) that is valid against "
        "this JSON Schema:\n" +
        *schema_in_prompt);
  } else {
    add("Answer with JSON only.");
  }
  // What follows changes from call to call: it goes after the stable prefix.
  const std::size_t stable = system_text.size();
  if (!avoid.empty()) {
    std::string text = "Earlier answers in this session made these mistakes; avoid them:";
    for (const auto& line : avoid) text += "\n- " + line;
    add(text);
  }
  std::vector<providers::ChatMessage> messages;
  messages.push_back({"system", std::move(system_text), stable});
  messages.push_back({"user", user, 0});
  return messages;
}

std::string RetryTurn(const std::vector<FieldError>& errors, AttemptKind failed, bool fresh, std::string_view tool) {
  std::string text = fresh ? "An earlier answer to this request " : "Your answer ";
  if (failed == AttemptKind::kParse) {
    text += "could not be parsed as JSON:";
  } else if (failed == AttemptKind::kRule) {
    text += fresh ? "matched the JSON Schema but broke these rules, by JSON pointer:"
                  : "matches the JSON Schema but breaks these rules, by JSON pointer:";
  } else {
    text += fresh ? "did not match the JSON Schema. Every error, by JSON pointer:"
                  : "does not match the JSON Schema. Every error, by JSON pointer:";
  }
  for (const auto& e : errors) text += "\n- " + ShownPointer(e.path) + ": " + e.message;
  if (tool.empty()) {
    text += "\nAnswer again with the corrected JSON only: one JSON value, no prose, no code fence.";
  } else {
    text += "\nAnswer again by calling the tool \"" + std::string(tool) + "\" with the corrected arguments.";
  }
  return text;
}

}  // namespace skillrunner::generation
