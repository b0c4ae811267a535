#include "services/generation/stream_check.h"

#include <boost/json/object.hpp>

#include "services/common/json_pointer.h"

namespace skillrunner::generation {
namespace json = boost::json;

namespace {

constexpr int kMaxRefHops = 32;

// The keywords whose verdict on a complete value is final.
constexpr std::string_view kFinalKeywords[] = {
    "enum", "const", "minimum", "maximum", "required", "exclusiveMinimum", "exclusiveMaximum"};

}  // namespace

StreamCheck::StreamCheck(const json::value& schema, bool skip_nulls) : schema_(schema), skip_nulls_(skip_nulls) {}

// Follows local `$ref`s ("#/..."), at most kMaxRefHops of them.
const json::value* StreamCheck::Resolve(const json::value* schema) const {
  for (int hop = 0; schema != nullptr && hop < kMaxRefHops; ++hop) {
    const json::object* object = schema->if_object();
    const json::value* ref = object != nullptr ? object->if_contains("$ref") : nullptr;
    if (ref == nullptr || !ref->is_string()) return schema;
    std::string_view target = ref->as_string();
    if (target.empty() || target[0] != '#') return nullptr;
    target.remove_prefix(1);
    boost::system::error_code ec;
    schema = schema_.find_pointer(target, ec);
  }
  return schema;
}

const json::value* StreamCheck::SchemaAt(const std::vector<std::string>& tokens) const {
  const json::value* schema = Resolve(&schema_);
  for (const std::string& token : tokens) {
    const json::object* object = schema != nullptr ? schema->if_object() : nullptr;
    if (object == nullptr) return nullptr;
    const json::value* next = nullptr;
    if (const json::value* properties = object->if_contains("properties"); properties && properties->is_object()) {
      next = properties->as_object().if_contains(token);
    }
    if (next == nullptr) {
      const json::value* items = object->if_contains("items");
      const bool index = !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
      if (items != nullptr && items->is_object() && index) next = items;
    }
    schema = Resolve(next);
  }
  return schema;
}

const validation::CompiledSchema* StreamCheck::Final(const json::value& subschema) {
  auto found = compiled_.find(&subschema);
  if (found != compiled_.end()) return found->second.get();
  json::object final_keywords;
  if (const json::value* draft = schema_.is_object() ? schema_.as_object().if_contains("$schema") : nullptr) {
    final_keywords["$schema"] = *draft;
  }
  bool any = false;
  for (std::string_view keyword : kFinalKeywords) {
    if (const json::value* v = subschema.as_object().if_contains(keyword)) {
      final_keywords[keyword] = *v;
      any = true;
    }
  }
  std::shared_ptr<const validation::CompiledSchema> compiled;
  if (any) {
    auto made = validation::CompiledSchema::Compile(final_keywords);
    if (made) compiled = std::move(*made);
  }
  return compiled_.emplace(&subschema, std::move(compiled)).first->second.get();
}

std::vector<FieldError> StreamCheck::CheckNew(const PartialJson& parsed) {
  std::vector<FieldError> errors;
  const auto& complete = parsed.complete();
  for (; checked_ < complete.size() && errors.empty(); ++checked_) {
    const std::string& pointer = complete[checked_];
    std::vector<std::string> tokens;
    if (!ParsePointer(pointer, tokens)) continue;
    const json::value* subschema = SchemaAt(tokens);
    if (subschema == nullptr || !subschema->is_object()) continue;
    boost::system::error_code ec;
    const json::value* value = parsed.value().find_pointer(pointer, ec);
    if (value == nullptr || (skip_nulls_ && value->is_null())) continue;
    const validation::CompiledSchema* final_keywords = Final(*subschema);
    if (final_keywords == nullptr) continue;
    for (FieldError& error : final_keywords->Validate(*value)) {
      errors.push_back({pointer + error.path, std::move(error.message)});
    }
  }
  return errors;
}

}  // namespace skillrunner::generation
