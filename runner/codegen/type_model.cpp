#include "runner/codegen/type_model.h"

#include <boost/json/parse.hpp>
#include <cctype>
#include <map>

#include "runner/tree/embedded_schemas.h"
#include "runner/tree/skill_json.h"
#include "services/common/json_pointer.h"

namespace skillrunner::codegen {
namespace json = boost::json;

namespace {

constexpr int kMaxDepth = 32;

class Builder {
 public:
  Builder(const json::value& root, std::set<std::string>& taken, std::vector<ObjectType>& objects)
      : root_(root), taken_(taken), objects_(objects) {}

  TypeRef Type(const json::value& schema, const std::string& name, int depth = 0) {
    if (!schema.is_object() || depth > kMaxDepth) return {};
    const json::object& s = schema.get_object();
    if (const auto* ref = s.if_contains("$ref"); ref && ref->is_string()) return Ref(*ref, name, depth);
    if (const auto* values = s.if_contains("enum"); values && values->is_array() && !values->get_array().empty()) {
      return Literals(values->get_array());
    }
    if (const auto* value = s.if_contains("const")) return Literals(json::array{*value});
    for (const char* keyword : {"anyOf", "oneOf"}) {
      if (const auto* branches = s.if_contains(keyword); branches && branches->is_array()) {
        return Union(branches->get_array(), name, depth);
      }
    }
    if (const auto* all = s.if_contains("allOf"); all && all->is_array())
      return AllOf(s, all->get_array(), name, depth);
    const json::value* type = s.if_contains("type");
    if (type && type->is_array()) return TypeList(s, type->get_array(), name, depth);
    if (type && type->is_string()) return Typed(s, std::string(type->get_string()), name, depth);
    if (s.contains("properties")) return Typed(s, "object", name, depth);
    if (s.contains("items")) return Typed(s, "array", name, depth);
    return {};
  }

  // `name`, or with a number when another type has it.
  std::string Claim(const std::string& name) {
    std::string chosen = name;
    for (int n = 2; taken_.contains(chosen); ++n) chosen = name + std::to_string(n);
    taken_.insert(chosen);
    return chosen;
  }

 private:
  TypeRef Ref(const json::value& ref, const std::string& name, int depth) {
    const std::string text(ref.get_string());
    std::vector<std::string> tokens;
    if (text.empty() || text[0] != '#' || !ParsePointer(text.substr(1), tokens)) return {};
    // "#": the root object itself (a verdict's `first`).
    if (tokens.empty() && !root_object_.empty()) return {TypeKind::kObject, {}, {}, root_object_};
    const json::value* target = &root_;
    for (const auto& token : tokens) {
      if (target->is_object() && target->get_object().contains(token)) {
        target = &target->get_object().at(token);
      } else {
        return {};
      }
    }
    // A schema that refers to itself (a tree, a list) is not typed further.
    // Each definition is typed once, however many places refer to it.
    if (expanding_.contains(text)) return {};
    if (auto done = resolved_.find(text); done != resolved_.end()) return done->second;
    expanding_.insert(text);
    TypeRef type = Type(*target, tokens.empty() ? name : PascalName(tokens.back()), depth + 1);
    expanding_.erase(text);
    resolved_[text] = type;
    return type;
  }

  static TypeRef Literals(const json::array& values) {
    TypeRef type{TypeKind::kLiterals, {}, {}, {}};
    for (const auto& value : values) type.literals.push_back(value);
    return type;
  }

  TypeRef Union(const json::array& branches, const std::string& name, int depth) {
    TypeRef type{TypeKind::kUnion, {}, {}, {}};
    int n = 0;
    for (const auto& branch : branches) {
      type.members.push_back(
          Type(branch, name + (branches.size() > 1 ? "Option" + std::to_string(++n) : ""), depth + 1));
    }
    return type;
  }

  // allOf of object schemas: one object with every branch's properties (and
  // the sibling keywords'); anything else is not typed further.
  TypeRef AllOf(const json::object& schema, const json::array& branches, const std::string& name, int depth) {
    json::object merged{{"type", "object"}};
    json::object properties;
    json::array required;
    std::vector<const json::object*> parts{&schema};
    for (const auto& branch : branches) {
      if (!branch.is_object()) return {};
      parts.push_back(&branch.get_object());
    }
    for (const json::object* part : parts) {
      if (const auto* p = part->if_contains("properties"); p && p->is_object()) {
        for (const auto& [key, value] : p->get_object()) properties[key] = value;
      }
      if (const auto* r = part->if_contains("required"); r && r->is_array()) {
        for (const auto& item : r->get_array()) required.push_back(item);
      }
    }
    if (properties.empty()) return {};
    merged["properties"] = std::move(properties);
    merged["required"] = std::move(required);
    if (const auto* d = schema.if_contains("description")) merged["description"] = *d;
    return Type(merged, name, depth + 1);
  }

  TypeRef TypeList(const json::object& schema, const json::array& types, const std::string& name, int depth) {
    TypeRef type{TypeKind::kUnion, {}, {}, {}};
    for (const auto& t : types) {
      if (t.is_string()) type.members.push_back(Typed(schema, std::string(t.get_string()), name, depth));
    }
    if (type.members.size() == 1) return type.members.front();
    return type;
  }

  TypeRef Typed(const json::object& schema, const std::string& type, const std::string& name, int depth) {
    if (type == "string") return {TypeKind::kString, {}, {}, {}};
    if (type == "integer") return {TypeKind::kInteger, {}, {}, {}};
    if (type == "number") return {TypeKind::kNumber, {}, {}, {}};
    if (type == "boolean") return {TypeKind::kBoolean, {}, {}, {}};
    if (type == "null") return {TypeKind::kNull, {}, {}, {}};
    if (type == "array") {
      const json::value* items = schema.if_contains("items");
      TypeRef item = items && items->is_object() ? Type(*items, name + "Item", depth + 1) : TypeRef{};
      return {TypeKind::kArray, {}, {std::move(item)}, {}};
    }
    if (type == "object") return Object(schema, name, depth);
    return {};
  }

  TypeRef Object(const json::object& schema, const std::string& name, int depth) {
    const json::value* properties = schema.if_contains("properties");
    if (!properties || !properties->is_object() || properties->get_object().empty()) {
      const json::value* extra = schema.if_contains("additionalProperties");
      TypeRef value = extra && extra->is_object() ? Type(*extra, name + "Value", depth + 1) : TypeRef{};
      return {TypeKind::kMap, {}, {std::move(value)}, {}};
    }
    std::set<std::string> required;
    if (const auto* r = schema.if_contains("required"); r && r->is_array()) {
      for (const auto& item : r->get_array()) {
        if (item.is_string()) required.insert(std::string(item.get_string()));
      }
    }
    ObjectType object{Claim(name), Description(schema), {}};
    if (root_.is_object() && &schema == &root_.get_object()) root_object_ = object.name;
    for (const auto& [key, value] : properties->get_object()) {
      const std::string field(key);
      TypeRef type = Type(value, object.name + PascalName(field), depth + 1);
      std::string description = value.is_object() ? Description(value.get_object()) : "";
      object.fields.push_back(Field{field, std::move(type), required.contains(field), std::move(description)});
    }
    TypeRef ref{TypeKind::kObject, {}, {}, object.name};
    objects_.push_back(std::move(object));
    return ref;
  }

  static std::string Description(const json::object& schema) {
    const json::value* d = schema.if_contains("description");
    return d && d->is_string() ? std::string(d->get_string()) : std::string();
  }

  const json::value& root_;
  std::set<std::string>& taken_;
  std::vector<ObjectType>& objects_;
  std::set<std::string> expanding_;  // the $refs being followed
  std::map<std::string, TypeRef> resolved_;
  std::string root_object_;  // the root's type, once it is an object being typed
};

}  // namespace

std::vector<std::string> SplitId(const std::string& id) {
  std::vector<std::string> words(1);
  for (char c : id) {
    if (c == '_' || c == '.' || c == '-') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back().push_back(c);
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

std::string PascalName(const std::string& id) {
  // Any character that cannot be in a name separates words (a property may be "first name").
  std::string name;
  bool word_start = true;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      word_start = true;
      continue;
    }
    name.push_back(word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    word_start = false;
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "S" + name;
  // Python's capitalised keywords.
  if (name == "None" || name == "True" || name == "False") name = "S" + name;
  return name;
}

std::string TypeDescription(const ObjectType& object, const SkillTypes& types) {
  if (!object.description.empty()) return object.description;
  const std::string& id = types.skill->id;
  if (object.name == types.input_name) return "The input of skill " + id + ".";
  if (object.name == types.output_name) return "The output of skill " + id + ".";
  return "Part of skill " + id + "'s schemas.";
}

SkillTypes BuildSkillTypes(const Skill& skill, const std::string& pascal_name, std::set<std::string>& taken) {
  SkillTypes types;
  types.skill = &skill;
  types.schema_hash = SkillSchemaHash(skill);
  // An object root is the named type; any other root gets an alias by that name.
  auto root = [&](const json::value& schema, const std::string& name, TypeRef& type, std::string& type_name) {
    Builder builder(schema, taken, types.objects);
    type = builder.Type(schema, name);
    type_name = type.kind == TypeKind::kObject ? type.object : builder.Claim(name);
  };
  root(skill.input_schema_json, pascal_name + "Input", types.input, types.input_name);
  // A review skill answers with a verdict.
  static const json::value verdict = json::parse(EmbeddedSchema("verdict.schema.json"));
  const bool review = skill.template_type == TemplateType::kLlmReview && skill.output_schema_json.is_null();
  root(review ? verdict : skill.output_schema_json, pascal_name + "Output", types.output, types.output_name);
  return types;
}

std::string FunctionDescription(const SkillTypes& types, const std::string& fails, const std::string& allow) {
  const Skill& skill = *types.skill;
  std::string doc = skill.description.empty() ? "Invoke skill " + skill.id + "." : skill.description;
  doc += "\n\nSkill " + skill.id + " version " + std::to_string(skill.version) + " (" +
         std::string(TemplateTypeName(skill.template_type)) + ").\n" + fails +
         " SchemaChangedError when the server's skill has other schemas than\n" + types.schema_hash +
         " at another version (a breaking change).";
  if (skill.review) {
    doc += "\n" + fails + " ReviewFailedError when the review gate failed the answer\n(" + allow +
           " returns it all the same).";
  }
  return doc;
}

}  // namespace skillrunner::codegen
