#include "runner/tree/skill_schemas.h"

#include <boost/json/parse.hpp>
#include <filesystem>
#include <map>
#include <optional>

#include "runner/tree/embedded_schemas.h"
#include "runner/tree/lint_codes.h"
#include "runner/tree/schema_lint.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

// The fixed input of review skills: {subject, context?}.
constexpr std::string_view kReviewInputSchema = R"({
  "type": "object",
  "required": ["subject"],
  "additionalProperties": false,
  "properties": {"subject": {}, "context": {}}
})";

// The metaschema says `type` must match "one of its anyOf branches"; say
// which names it takes instead.
std::string MetaschemaMessage(const FieldError& error, const json::value& schema) {
  if (!error.path.ends_with("/type")) return error.message;
  boost::system::error_code ec;
  const json::value* value = schema.find_pointer(error.path, ec);
  if (!value || !value->is_string()) return error.message;
  return "unknown type \"" + std::string(value->as_string()) +
         "\" (expected array, boolean, integer, null, number, object or string)";
}

// The metaschema's failures, each at the deepest key at fault: a failed
// anyOf/oneOf (a subschema position that takes "a schema or ...") is checked
// again as a schema of its own, so `qty: { type: int }` is reported at its
// type, not as "no anyOf branch matched" at the enclosing object.
std::vector<FieldError> MetaschemaErrors(const validation::CompiledSchema& meta, const json::value& schema,
                                         int depth = 0) {
  std::vector<FieldError> out;
  for (auto& error : meta.Validate(schema)) {
    bool branch = error.message.find("anyOf branch") != std::string::npos ||
                  error.message.find("oneOf branch") != std::string::npos;
    boost::system::error_code ec;
    const json::value* node =
        branch && depth < 32 && !error.path.empty() ? schema.find_pointer(error.path, ec) : nullptr;
    if (node != nullptr && node->is_object()) {
      auto inner = MetaschemaErrors(meta, *node, depth + 1);
      if (!inner.empty()) {
        for (auto& deeper : inner) out.push_back({error.path + deeper.path, std::move(deeper.message)});
        continue;
      }
    }
    out.push_back(std::move(error));
  }
  return out;
}

class SchemaLoader {
 public:
  SchemaLoader(DescriptorReader& reader, Skill& skill) : reader_(reader), skill_(skill) {}

  std::optional<json::value> ReadSchemaFile(const std::string& pointer, const std::string& rel, std::string& shown) {
    std::filesystem::path file = skill_.dir / rel;
    shown = file.string();
    auto doc = LoadYamlFile(shown);
    if (!doc) {
      reader_.Error(pointer, "cannot load schema file " + doc.error().ToString(), "schema-invalid");
      return std::nullopt;
    }
    schema_docs_[pointer] = std::move(*doc);
    return schema_docs_[pointer].value;
  }

  // Loads, checks against the draft metaschema, and compiles one schema.
  std::shared_ptr<const validation::CompiledSchema> LoadSchema(const std::string& key, json::value& out) {
    std::string pointer = "/" + key;
    auto* v = reader_.root().if_contains(key);
    if (!v) return nullptr;
    std::string shown;
    const SourceMap* positions = &reader_.doc().positions;
    std::string prefix = pointer;
    std::string file = reader_.path();
    if (v->is_string()) {
      auto loaded = ReadSchemaFile(pointer, std::string(v->as_string()), shown);
      if (!loaded) return nullptr;
      out = *loaded;
      positions = &schema_docs_[pointer].positions;
      prefix.clear();
      file = shown;
    } else {
      out = *v;
    }
    std::string_view meta = "draft-07.schema.json";
    if (auto* obj = out.if_object(); obj && obj->contains("$schema") && (*obj)["$schema"].is_string()) {
      std::string_view uri = (*obj)["$schema"].as_string();
      if (uri.find("draft-04") != std::string_view::npos) meta = "draft-04.schema.json";
    }
    bool bad = false;
    for (const auto& e : MetaschemaErrors(EmbeddedCompiledSchema(meta), out)) {
      reader_.Add(
          {file, positions->Find(prefix + e.path),
           key + (e.path.empty() ? "" : " at " + e.path) + " is not a valid JSON Schema: " + MetaschemaMessage(e, out),
           Diagnostic::Severity::kError, "schema-invalid"});
      bad = true;
    }
    if (bad) return nullptr;
    static const json::value kDraft7 = json::parse(EmbeddedSchema("draft-07.schema.json"));
    static const json::value kDraft4 = json::parse(EmbeddedSchema("draft-04.schema.json"));
    const bool draft4 = meta == "draft-04.schema.json";
    for (auto& finding : LintSchema(out, draft4 ? kDraft4 : kDraft7, draft4)) {
      SourcePosition pos =
          finding.at_key ? positions->FindKey(prefix + finding.path) : positions->Find(prefix + finding.path);
      reader_.Add({file, pos, key + " at " + finding.path + ": " + finding.message,
                   finding.error ? Diagnostic::Severity::kError : Diagnostic::Severity::kWarning,
                   std::move(finding.code)});
      bad = bad || finding.error;
    }
    if (bad) return nullptr;
    auto compiled = validation::CompiledSchema::Compile(out);
    if (!compiled) {
      reader_.Add({file, positions->Find(prefix), key + " is not a valid JSON Schema: " + compiled.error().message,
                   Diagnostic::Severity::kError, "schema-invalid"});
      return nullptr;
    }
    return *compiled;
  }

  void Load() {
    skill_.input_schema = LoadSchema("input_schema", skill_.input_schema_json);
    skill_.output_schema = LoadSchema("output_schema", skill_.output_schema_json);
    if (skill_.template_type == TemplateType::kLlmReview) {
      skill_.input_schema_json = json::parse(kReviewInputSchema);
      skill_.input_schema = *validation::CompiledSchema::Compile(skill_.input_schema_json);
    }
    CheckPlaceholderPaths();
  }

  // The declared property closest to the placeholder's segment `i`, as the
  // placeholder it would make: ` (did you mean "{{input.text}}"?)`.
  static std::string PlaceholderHint(const Placeholder& placeholder, std::size_t i, const json::value* props) {
    if (props == nullptr || !props->is_object()) return {};
    std::vector<std::string> declared;
    for (const auto& [name, unused] : props->as_object()) declared.emplace_back(name);
    std::vector<std::string> shown;
    for (const std::string& name : ClosestNames(placeholder.path[i], declared, 1)) {
      Placeholder fixed = placeholder;
      fixed.path.resize(i + 1);
      fixed.path[i] = name;
      shown.push_back("{{" + PlaceholderName(fixed) + "}}");
    }
    return DidYouMean(shown);
  }

  // A placeholder must name a property the input schema declares, when the
  // schema says which properties exist.
  void CheckPlaceholderPaths() {
    if (!skill_.input_schema_json.is_object()) return;
    auto check = [&](std::string_view key, const std::vector<Placeholder>& placeholders) {
      for (const auto& placeholder : placeholders) {
        const json::value* schema = &skill_.input_schema_json;
        for (std::size_t i = 0; i < placeholder.path.size(); ++i) {
          const json::object* obj = schema->if_object();
          const json::value* props = obj ? obj->if_contains("properties") : nullptr;
          const json::value* next =
              props && props->is_object() ? props->as_object().if_contains(placeholder.path[i]) : nullptr;
          if (next) {
            schema = next;
            continue;
          }
          const json::value* additional = obj ? obj->if_contains("additionalProperties") : nullptr;
          bool closed = additional && additional->is_bool() && !additional->as_bool();
          std::string message = "placeholder {{" + PlaceholderName(placeholder) +
                                "}} names a property input_schema does not declare" +
                                PlaceholderHint(placeholder, i, props);
          if (closed || props) reader_.Error("/prompt/" + std::string(key), message, "placeholder-unknown");
          break;
        }
      }
    };
    check("system", skill_.prompt.system_placeholders);
    check("user", skill_.prompt.user_placeholders);
  }

 private:
  DescriptorReader& reader_;
  Skill& skill_;
  std::map<std::string, YamlDocument> schema_docs_;
};

}  // namespace

void LoadSkillSchemas(DescriptorReader& reader, Skill& skill) { SchemaLoader(reader, skill).Load(); }

}  // namespace skillrunner
