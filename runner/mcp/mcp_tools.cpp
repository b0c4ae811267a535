#include "runner/mcp/mcp_tools.h"

#include <algorithm>
#include <boost/json/string.hpp>
#include <string>
#include <vector>

#include "services/common/json_text.h"
#include "services/validation/error_paths.h"

namespace skillrunner::mcp {
namespace json = boost::json;

namespace {

constexpr int kMaxDepth = 64;      // user input: a bound on the walk
constexpr int kMaxInlines = 1000;  // $ref copies per schema

// The schema a local ref ("#", "#/definitions/a") points at inside `root`, or nullptr.
const json::value* ResolveLocal(const json::value& root, std::string_view ref) {
  if (ref.empty() || ref.front() != '#') return nullptr;
  std::string pointer = validation::DecodeUriFragment(ref.substr(1));
  if (pointer.empty()) return &root;
  boost::system::error_code ec;
  const json::value* found = root.find_pointer(pointer, ec);
  return ec ? nullptr : found;
}

// Keywords whose values are data, not schemas: copied as they are.
bool IsDataKeyword(std::string_view key) {
  return key == "const" || key == "enum" || key == "default" || key == "examples" || key == "required";
}

class Inliner {
 public:
  explicit Inliner(const json::value& root) : root_(root) {}
  json::value Node(const json::value& schema, int depth);
  bool kept_ref() const { return kept_ref_; }

 private:
  json::value Inline(const json::object& schema, const std::string& ref, const json::value& target, int depth);
  const json::value& root_;
  std::vector<std::string> stack_;  // the refs being copied in place, outermost first
  bool kept_ref_ = false;
  int inlines_ = 0;
};

json::value Inliner::Inline(const json::object& schema, const std::string& ref, const json::value& target, int depth) {
  json::value merged = target;
  if (target.is_object()) {
    json::object& copy = merged.get_object();
    if (&target == &root_) {
      copy.erase("$defs");
      copy.erase("definitions");
    }
    for (const auto& [key, value] : schema) {
      if (key != "$ref") copy[key] = value;
    }
  }
  stack_.push_back(ref);
  json::value out = Node(merged, depth + 1);
  stack_.pop_back();
  return out;
}

json::value Inliner::Node(const json::value& schema, int depth) {
  if (depth > kMaxDepth) return schema;
  if (const json::array* items = schema.if_array()) {
    json::array out;
    for (const json::value& item : *items) out.push_back(Node(item, depth + 1));
    return out;
  }
  const json::object* object = schema.if_object();
  if (object == nullptr) return schema;
  if (const json::value* ref = object->if_contains("$ref"); ref != nullptr && ref->is_string()) {
    std::string text(ref->get_string());
    const json::value* target = ResolveLocal(root_, text);
    if (target != nullptr && std::find(stack_.begin(), stack_.end(), text) == stack_.end() &&
        ++inlines_ <= kMaxInlines) {
      return Inline(*object, text, *target, depth);
    }
    kept_ref_ = true;  // recursive (or not local): left for the client to follow
  }
  json::object out;
  for (const auto& [key, value] : *object) {
    if (key == "$schema" || key == "$id") continue;
    // The root's definitions as written: what a kept (recursive) ref needs, dropped when none is.
    const bool definitions = depth == 0 && (key == "$defs" || key == "definitions");
    out[key] = IsDataKeyword(key) || definitions ? value : Node(value, depth + 1);
  }
  return out;
}

// {"type": "object", "properties": {name: schema}, "required": [name]}, the
// schema's definitions moved up beside it (a kept ref still finds them).
json::value Wrapped(json::value schema, std::string_view name) {
  json::object wrapper{{"type", "object"}};
  if (json::object* inner = schema.if_object()) {
    for (const char* defs : {"$defs", "definitions"}) {
      if (auto it = inner->find(defs); it != inner->end()) {
        wrapper[defs] = std::move(it->value());
        inner->erase(it);
      }
    }
  }
  wrapper["properties"] = json::object{{name, std::move(schema)}};
  wrapper["required"] = json::array{json::string(name)};
  wrapper["additionalProperties"] = false;
  return wrapper;
}

json::value ToolRoot(const json::value& schema, std::string_view wrap_as) {
  json::value converted = ToolSchema(schema.is_null() ? json::value(json::object{}) : schema);
  return IsObjectRoot(converted) ? converted : Wrapped(std::move(converted), wrap_as);
}

}  // namespace

std::string_view NegotiatedVersion(std::string_view requested) {
  for (std::string_view version : kProtocolVersions) {
    if (version == requested) return version;
  }
  return kProtocolVersions[0];
}

bool HasStructuredOutput(std::string_view version) { return version >= std::string_view("2025-06-18"); }

bool IsTool(const Skill& skill) { return skill.template_type != TemplateType::kLlmReview; }

bool IsObjectRoot(const json::value& schema) {
  const json::object* object = schema.if_object();
  const json::value* type = object != nullptr ? object->if_contains("type") : nullptr;
  return type != nullptr && type->is_string() && type->get_string() == "object";
}

json::value ToolSchema(const json::value& schema) {
  Inliner inliner(schema);
  json::value out = inliner.Node(schema, 0);
  if (json::object* object = out.if_object(); object != nullptr && !inliner.kept_ref()) {
    object->erase("$defs");
    object->erase("definitions");
  }
  return out;
}

json::object ToolOf(const Skill& skill, bool with_output_schema) {
  json::object tool{{"name", skill.id}};
  if (!skill.description.empty()) tool["description"] = skill.description;
  tool["inputSchema"] = ToolRoot(skill.input_schema_json, "input");
  if (with_output_schema) tool["outputSchema"] = ToolRoot(skill.output_schema_json, "result");
  // A generation only reads its input; a handler runs a program of the team's.
  const bool generation = skill.template_type == TemplateType::kLlmJsonGeneration;
  tool["annotations"] = json::object{{"readOnlyHint", generation},
                                     {"destructiveHint", false},
                                     {"idempotentHint", false},
                                     {"openWorldHint", !generation}};
  return tool;
}

json::array ToolsOf(const SkillRegistry& registry, bool with_output_schema) {
  json::array tools;
  for (const auto& skill : registry.skills()) {
    if (IsTool(*skill)) tools.push_back(ToolOf(*skill, with_output_schema));
  }
  return tools;
}

json::value SkillInput(const Skill& skill, json::value arguments) {
  if (arguments.is_null()) arguments = json::object{};
  if (IsObjectRoot(skill.input_schema_json) || skill.input_schema_json.is_null()) return arguments;
  json::object* object = arguments.if_object();
  if (object == nullptr) return arguments;  // the input schema's own error names it
  auto it = object->find("input");
  return it == object->end() ? json::value(nullptr) : std::move(it->value());
}

namespace {

json::object TextContent(std::string text) { return json::object{{"type", "text"}, {"text", std::move(text)}}; }

// "CODE: message (N attempts)", then each field error on its own line.
std::string FailureText(const json::object& data, std::size_t attempts) {
  std::string text = std::string(data.contains("code") ? data.at("code").as_string() : "INTERNAL") + ": ";
  if (const json::value* message = data.if_contains("message"); message && message->is_string()) {
    text += message->get_string();
  }
  text += " (" + std::to_string(attempts) + (attempts == 1 ? " attempt)" : " attempts)");
  if (const json::value* errors = data.if_contains("errors"); errors && errors->is_array()) {
    for (const json::value& error : errors->get_array()) text += "\n" + CompactJson(error);
  }
  return text;
}

json::object FailureResult(const json::object& error) {
  json::object data;
  if (const json::value* d = error.if_contains("data"); d && d->is_object()) data = d->get_object();
  if (!data.contains("code")) data["code"] = "INTERNAL";
  if (!data.contains("message") && error.contains("message")) data["message"] = error.at("message");
  const json::value* attempts = data.if_contains("attempts");
  const std::size_t count = attempts != nullptr && attempts->is_array() ? attempts->get_array().size() : 0;
  json::object meta{{"code", data.at("code")}, {"message", data.at("message")}, {"attempts", count}};
  for (const char* extra : {"errors", "retry_after_ms", "arm", "skill_version", "metrics"}) {
    if (const json::value* v = data.if_contains(extra)) meta[extra] = *v;
  }
  return json::object{{"content", json::array{TextContent(FailureText(data, count))}},
                      {"isError", true},
                      {"_meta", json::object{{"skillrunner/error", std::move(meta)}}}};
}

}  // namespace

json::object CallResult(const Skill& skill, const json::object& answer, bool structured) {
  const json::value* result = answer.if_contains("result");
  if (result == nullptr || !result->is_object()) {
    const json::value* error = answer.if_contains("error");
    return FailureResult(error != nullptr && error->is_object() ? error->get_object() : json::object{});
  }
  const json::object& done = result->get_object();
  const json::value& output = done.contains("output") ? done.at("output") : json::value(nullptr);
  json::object out{{"content", json::array{TextContent(CompactJson(output))}}, {"isError", false}};
  if (structured) {
    out["structuredContent"] =
        IsObjectRoot(skill.output_schema_json) ? output : json::value(json::object{{"result", output}});
  }
  json::object meta;
  for (const char* key : {"skill_version", "arm", "metrics", "review"}) {
    if (const json::value* v = done.if_contains(key)) meta["skillrunner/" + std::string(key)] = *v;
  }
  out["_meta"] = std::move(meta);
  return out;
}

}  // namespace skillrunner::mcp
