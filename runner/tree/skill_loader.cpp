// Loads and checks one skill descriptor (DESIGN §3, §8 "Descriptors").
#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "runner/tree/embedded_schemas.h"
#include "runner/tree/lint_codes.h"
#include "runner/tree/schema_lint.h"
#include "runner/tree/skill_registry.h"
#include "services/common/json_pointer.h"
#include "services/common/json_text.h"
#include "services/generation/strict_schema.h"
#include "services/generation/structured_generator.h"
#include "services/providers/simulated/fault_script.h"

namespace skillrunner {
namespace json = boost::json;

std::string_view TemplateTypeName(TemplateType type) {
  switch (type) {
    case TemplateType::kLlmJsonGeneration:
      return "LLM_JSON_GENERATION";
    case TemplateType::kLlmReview:
      return "LLM_REVIEW";
    case TemplateType::kHandler:
      return "handler";
  }
  return "handler";
}

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

class SkillLoader {
 public:
  SkillLoader(const std::string& path, const YamlDocument& doc, const Config& config, std::vector<Diagnostic>& warnings)
      : path_(path), doc_(doc), root_(doc.value.as_object()), config_(config), warnings_(warnings) {}

  std::expected<Skill, std::vector<Diagnostic>> Load(const std::function<bool(std::string_view)>& is_known_handler) {
    skill_.file = path_;
    skill_.dir = std::filesystem::path(path_).parent_path();
    skill_.descriptor = doc_.value;
    skill_.id = Str("id");
    skill_.version = static_cast<int>(Int("version", 1));
    skill_.description = Str("description");
    skill_.model = Str("model");
    skill_.temperature = Num("temperature", 0.7);
    skill_.max_output_tokens = static_cast<int>(Int("max_output_tokens", 1024));
    skill_.timeout = std::chrono::milliseconds(Int("timeout_ms", 60000));
    if (Has("max_cost_usd")) skill_.max_cost_usd = Num("max_cost_usd", 0);
    if (Has("structured_output")) skill_.structured_output = ParseOutputMode(Str("structured_output"));
    if (Str("coercion") == "lax") skill_.coercion = generation::Coercion::kLax;
    skill_.handler = Str("handler");
    skill_.rubric = Str("rubric");
    if (auto* cmd = root_.if_contains("command")) {
      for (const auto& arg : cmd->as_array()) skill_.command.emplace_back(arg.as_string());
    }
    std::string type = Str("template_type");
    if (type == "LLM_JSON_GENERATION") {
      skill_.template_type = TemplateType::kLlmJsonGeneration;
    } else if (type == "LLM_REVIEW") {
      skill_.template_type = TemplateType::kLlmReview;
    }
    const std::size_t first_warning = warnings_.size();
    LoadLint();
    LoadRetry();
    LoadValidators();
    LoadReview();
    CheckShape(is_known_handler);
    LoadPrompt();
    LoadSchemas();
    CheckModel();
    CheckSimulation();
    json::value strict_wire = ResolveOutputMode();
    Acknowledge(warnings_, first_warning, allow_);
    if (!errors_.empty()) return std::unexpected(std::move(errors_));
    MakeSpecs(std::move(strict_wire));
    return std::move(skill_);
  }

 private:
  bool Has(std::string_view key) const { return root_.contains(key); }
  std::string Str(std::string_view key) const {
    auto* v = root_.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
  }
  std::int64_t Int(std::string_view key, std::int64_t fallback) const {
    auto* v = root_.if_contains(key);
    return v ? IntOf(*v, fallback) : fallback;
  }
  // Where the schema says integer, 2.0 is 2 too (found by the skill_yaml
  // fuzz target: as_int64 threw on it).
  static std::int64_t IntOf(const json::value& v, std::int64_t fallback = 0) {
    return JsonInteger(v).value_or(fallback);
  }
  double Num(std::string_view key, double fallback) const {
    auto* v = root_.if_contains(key);
    return v && v->is_number() ? v->to_number<double>() : fallback;
  }

  void Error(const std::string& pointer, const std::string& message, std::string code = "skill-invalid") {
    errors_.push_back({path_, doc_.positions.Find(pointer),
                       (pointer.empty() ? std::string() : pointer + ": ") + message, Diagnostic::Severity::kError,
                       std::move(code)});
  }
  void Warn(const std::string& pointer, const std::string& message, std::string code) {
    warnings_.push_back({path_, doc_.positions.Find(pointer),
                         (pointer.empty() ? std::string() : pointer + ": ") + message, Diagnostic::Severity::kWarning,
                         std::move(code)});
  }

  // `lint: {allow: [code, ...]}`: the warnings of this skill it acknowledges.
  void LoadLint() {
    const auto* lint = root_.if_contains("lint");
    const auto* allow = lint && lint->is_object() ? lint->as_object().if_contains("allow") : nullptr;
    if (allow == nullptr || !allow->is_array()) return;
    for (std::size_t i = 0; i < allow->as_array().size(); ++i) {
      const json::value& slug = allow->as_array()[i];
      if (!slug.is_string()) continue;  // the descriptor's schema said so
      if (std::string why = AllowProblem(slug.as_string()); !why.empty()) {
        Error("/lint/allow/" + std::to_string(i), why, "allow-unknown");
      } else {
        allow_.emplace_back(slug.as_string());
      }
    }
  }

  void LoadRetry() {
    auto* retry = root_.if_contains("retry");
    if (!retry) return;
    const json::object& r = retry->as_object();
    if (auto* v = r.if_contains("validation_retries")) {
      skill_.retry.validation_retries = static_cast<int>(IntOf(*v));
    }
    if (auto* v = r.if_contains("retry_temperature")) {
      skill_.retry.retry_temperature = v->to_number<double>();
    }
    if (auto* v = r.if_contains("strategy"); v && v->is_string() && v->as_string() == "fresh") {
      skill_.retry.strategy = generation::RetryStrategy::kFresh;
    }
    if (auto* v = r.if_contains("truncation_retry")) skill_.retry_truncated = v->as_bool();
    auto* transient = r.if_contains("transient");
    if (!transient) return;
    const json::object& t = transient->as_object();
    auto ms = [&](std::string_view key, std::chrono::milliseconds& out) {
      if (auto* v = t.if_contains(key)) out = std::chrono::milliseconds(IntOf(*v));
    };
    auto& policy = skill_.retry.transient;
    if (auto* v = t.if_contains("max_retries")) policy.max_retries = static_cast<int>(IntOf(*v));
    if (auto* v = t.if_contains("max_rate_limit_retries")) {
      policy.max_rate_limit_retries = static_cast<int>(IntOf(*v));
    }
    if (auto* v = t.if_contains("multiplier")) policy.multiplier = v->to_number<double>();
    ms("initial_delay_ms", policy.initial_delay);
    ms("max_delay_ms", policy.max_delay);
    ms("max_server_delay_ms", policy.max_server_delay);
  }

  // `validators:` (DESIGN 9.2); every path a JSON pointer.
  void LoadValidators() {
    auto* validators = root_.if_contains("validators");
    if (!validators || !validators->is_array()) return;
    // (Shapes the schema refused were reported already: skipped here.)
    auto pointer = [&](const json::value* v, const std::string& where) -> std::string {
      if (v == nullptr || !v->is_string()) return "";
      std::string text(v->as_string());
      std::vector<std::string> tokens;
      if (!ParsePointer(text, tokens)) {
        Error(where, "\"" + text + "\" is not a JSON pointer (\"\" for the whole answer, else /key/...)");
      }
      return text;
    };
    const json::array& items = validators->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_object()) continue;
      const json::object& item = items[i].as_object();
      const std::string at = "/validators/" + std::to_string(i);
      generation::Rule rule;
      if (auto* when = item.if_contains("when"); when && when->is_object()) {
        const json::value* equals = when->as_object().if_contains("equals");
        rule.when = generation::RuleGuard{pointer(when->as_object().if_contains("path"), at + "/when/path"),
                                          equals ? *equals : json::value()};
      }
      if (auto* list = item.if_contains("non_empty"); list && list->is_array()) {
        const json::array& pointers = list->as_array();
        for (std::size_t j = 0; j < pointers.size(); ++j) {
          rule.non_empty.push_back(pointer(&pointers[j], at + "/non_empty/" + std::to_string(j)));
        }
      }
      if (auto* argv = item.if_contains("exec"); argv && argv->is_array()) rule.exec = ExecRule(*argv, item);
      bool has_non_empty = item.contains("non_empty");
      if (has_non_empty == item.contains("exec")) {
        Error(at, has_non_empty ? "a validator is one rule: give non_empty and exec separate entries"
                                : "a validator needs a rule: non_empty: [pointers] or exec: [program, args...]");
      } else if (item.contains("timeout_ms") && !rule.exec) {
        Error(at + "/timeout_ms", "only exec validators take a timeout");
      }
      skill_.rules.push_back(std::move(rule));
    }
  }

  generation::ExecRule ExecRule(const json::value& argv, const json::object& item) const {
    generation::ExecRule rule;
    rule.dir = skill_.dir;
    for (const auto& arg : argv.as_array()) {
      if (!arg.is_string()) continue;
      rule.argv.emplace_back(arg.as_string());
      rule.name += (rule.name.empty() ? "" : " ") + rule.argv.back();
    }
    if (auto* v = item.if_contains("timeout_ms"); v && JsonInteger(*v)) {
      rule.timeout = std::chrono::milliseconds(IntOf(*v));
    }
    return rule;
  }

  void LoadReview() {
    auto* review = root_.if_contains("review");
    if (!review) return;
    const json::object& r = review->as_object();
    ReviewGate gate;
    if (auto* v = r.if_contains("rubric")) gate.rubric = std::string(v->as_string());
    if (auto* v = r.if_contains("skill")) gate.skill = std::string(v->as_string());
    if (gate.rubric.empty() == gate.skill.empty()) {
      Error("/review", gate.rubric.empty()
                           ? "a review gate needs the rubric to judge against (rubric: ID) or an LLM_REVIEW skill "
                             "to judge with (skill: ID)"
                           : "give the gate a rubric or an LLM_REVIEW skill, not both (the skill brings its own "
                             "rubric and model)");
    } else if (!gate.skill.empty()) {
      for (const char* key : {"model", "samples"}) {
        if (r.contains(key)) {
          Error("/review/" + std::string(key),
                "a gate judged by skill \"" + gate.skill + "\" takes its " + std::string(key) + " from that skill");
        }
      }
    }
    if (auto* v = r.if_contains("retry_once")) gate.retry_once = v->as_bool();
    if (auto* v = r.if_contains("model")) gate.model = std::string(v->as_string());
    if (auto* v = r.if_contains("samples")) gate.samples = static_cast<int>(IntOf(*v));
    skill_.review = std::move(gate);
  }

  // Which keys each kind of skill needs and refuses (DESIGN §8).
  void CheckShape(const std::function<bool(std::string_view)>& is_known_handler) {
    auto need = [&](std::string_view key, std::string_view who) {
      if (!Has(key)) Error("/" + std::string(key), std::string(who) + " need \"" + std::string(key) + "\"");
    };
    auto refuse = [&](std::string_view key, std::string_view who, std::string_view why) {
      if (Has(key))
        Error("/" + std::string(key), std::string(who) + " take no \"" + std::string(key) + "\"" + std::string(why));
    };
    switch (skill_.template_type) {
      case TemplateType::kLlmJsonGeneration:
        for (auto key : {"model", "prompt", "input_schema", "output_schema"}) {
          need(key, "LLM_JSON_GENERATION skills");
        }
        for (auto key : {"handler", "command", "rubric", "samples"}) {
          refuse(key, "LLM_JSON_GENERATION skills", "");
        }
        break;
      case TemplateType::kLlmReview:
        need("model", "LLM_REVIEW skills");
        need("rubric", "LLM_REVIEW skills");
        for (auto key : {"input_schema", "output_schema"}) {
          refuse(key, "LLM_REVIEW skills", " (their input is {subject, context?} and their output the verdict)");
        }
        for (auto key : {"handler", "command", "review", "prompt", "coercion", "validators"}) {
          refuse(key, "LLM_REVIEW skills", "");
        }
        break;
      case TemplateType::kHandler:
        if (!Has("handler")) {
          Error("",
                "a skill without template_type needs a \"handler\" (or set template_type to "
                "LLM_JSON_GENERATION or LLM_REVIEW)");
          return;
        }
        need("input_schema", "handler skills");
        need("output_schema", "handler skills");
        for (auto key : {"model", "prompt", "review", "rubric", "temperature", "max_output_tokens", "structured_output",
                         "samples", "retry", "coercion", "validators"}) {
          refuse(key, "handler skills", "");
        }
        if (skill_.handler == "exec") {
          need("command", "exec handler skills");
        } else {
          refuse("command", "only exec handler skills", "");
          if (is_known_handler && !is_known_handler(skill_.handler)) {
            Error("/handler", "unknown handler \"" + skill_.handler + "\"", "reference-unknown");
          }
        }
        break;
    }
  }

  void LoadPrompt() {
    auto* prompt = root_.if_contains("prompt");
    if (!prompt) return;
    const json::object& p = prompt->as_object();
    auto parse = [&](std::string_view key, std::string& text, std::vector<Placeholder>& out) {
      auto* v = p.if_contains(key);
      if (!v) return;
      text = std::string(v->as_string());
      auto placeholders = ParsePlaceholders(text);
      if (!placeholders) {
        Error("/prompt/" + std::string(key), placeholders.error().message, "placeholder-syntax");
        return;
      }
      out = std::move(*placeholders);
    };
    parse("system", skill_.prompt.system, skill_.prompt.system_placeholders);
    parse("user", skill_.prompt.user, skill_.prompt.user_placeholders);
  }

  std::optional<json::value> ReadSchemaFile(const std::string& pointer, const std::string& rel, std::string& shown) {
    std::filesystem::path file = skill_.dir / rel;
    shown = file.string();
    auto doc = LoadYamlFile(shown);
    if (!doc) {
      Error(pointer, "cannot load schema file " + doc.error().ToString(), "schema-invalid");
      return std::nullopt;
    }
    schema_docs_[pointer] = std::move(*doc);
    return schema_docs_[pointer].value;
  }

  // Loads, checks against the draft metaschema, and compiles one schema.
  std::shared_ptr<const validation::CompiledSchema> LoadSchema(const std::string& key, json::value& out) {
    std::string pointer = "/" + key;
    auto* v = root_.if_contains(key);
    if (!v) return nullptr;
    std::string shown;
    const SourceMap* positions = &doc_.positions;
    std::string prefix = pointer;
    std::string file = path_;
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
      errors_.push_back(
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
      (finding.error ? errors_ : warnings_)
          .push_back({file, pos, key + " at " + finding.path + ": " + finding.message,
                      finding.error ? Diagnostic::Severity::kError : Diagnostic::Severity::kWarning,
                      std::move(finding.code)});
      bad = bad || finding.error;
    }
    if (bad) return nullptr;
    auto compiled = validation::CompiledSchema::Compile(out);
    if (!compiled) {
      errors_.push_back({file, positions->Find(prefix), key + " is not a valid JSON Schema: " + compiled.error(),
                         Diagnostic::Severity::kError, "schema-invalid"});
      return nullptr;
    }
    return *compiled;
  }

  void LoadSchemas() {
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
          if (closed || props) Error("/prompt/" + std::string(key), message, "placeholder-unknown");
          break;
        }
      }
    };
    check("system", skill_.prompt.system_placeholders);
    check("user", skill_.prompt.user_placeholders);
  }

  // A model not in the models table is an error naming the closest ones,
  // unless the config sets default_provider: then a warning says where it
  // goes (DESIGN 9.8). --provider routes every model on purpose: no word.
  void CheckModel() {
    auto check = [&](const std::string& pointer, const std::string& model) {
      auto provider = config_.ProviderFor(model);
      if (config_.provider_override || config_.builtin || config_.models.contains(model)) {
        return provider.value_or("");
      }
      std::vector<std::string> known;
      for (const auto& [name, unused] : config_.models) known.push_back(name);
      std::string hint = DidYouMean(ClosestNames(model, known));
      if (!provider) {
        Error(pointer,
              "model \"" + model + "\" is not in the models table of " + config_.source + hint +
                  "; add it there (or set default_provider)",
              "model-unknown");
      } else {
        Warn(pointer,
             "model \"" + model + "\" is not in the models table of " + config_.source + hint +
                 ", so it runs on the default_provider \"" + *provider + "\"",
             "model-unlisted");
      }
      return provider.value_or("");
    };
    if (!skill_.model.empty()) skill_.provider = check("/model", skill_.model);
    if (skill_.review && skill_.review->model) check("/review/model", *skill_.review->model);
  }

  // The simulated provider owns the `simulation:` block (the composition
  // root hands it over); here its fault script is only checked.
  void CheckSimulation() {
    auto* simulation = root_.if_contains("simulation");
    if (!simulation) return;
    const json::object& sim = simulation->as_object();
    auto* faults = sim.if_contains("faults");
    if (!faults) return;
    auto parsed = providers::ParseFaultScript(*faults, providers::FaultScriptScope::kSkill);
    if (!parsed) {
      // The script's error names a pointer relative to the script.
      auto placed = PlaceUnder("/simulation/faults", parsed.error());
      Error(placed.pointer, placed.message);
    }
  }

  // native | json_object | none, and for native the strict wire schema, which
  // must be computable now: a schema the provider cannot take is an error
  // unless the skill chooses the validation loop.
  // Returns that wire schema (null when none is needed).
  json::value ResolveOutputMode() {
    if (skill_.template_type == TemplateType::kHandler) return nullptr;
    skill_.provider_kind = config_.KindOf(skill_.provider);
    skill_.output_mode = skill_.structured_output.value_or(config_.StructuredOutputFor(skill_.model));
    if (skill_.template_type != TemplateType::kLlmJsonGeneration) return nullptr;
    if (skill_.output_mode == OutputMode::kTool && skill_.provider_kind != "openai" &&
        skill_.provider_kind != "anthropic" && skill_.provider_kind != "simulated") {
      Error(Has("structured_output") ? "/structured_output" : "/model",
            "tool mode needs an openai or anthropic provider; model \"" + skill_.model + "\" runs on a " +
                skill_.provider_kind + " one");
      return nullptr;
    }
    const bool strict_wire = skill_.output_mode == OutputMode::kNative || skill_.output_mode == OutputMode::kTool;
    if (!strict_wire || skill_.provider_kind == "simulated") return nullptr;
    if (!skill_.output_schema) return nullptr;  // already reported
    auto dialect = generation::DialectOf(skill_.provider_kind);
    auto strict = generation::MakeStrictSchema(skill_.output_schema_json, dialect);
    if (!strict) {
      Error("/output_schema",
            "the " + skill_.provider_kind + " strict mode of model \"" + skill_.model + "\" cannot take this schema: " +
                strict.error() + " (set `structured_output: none` to use the validation loop)",
            "strict-unsupported");
      return nullptr;
    }
    for (const auto& note : strict->client_only) {
      // A note starts with the pointer into the schema it is about.
      std::string at = PlaceUnder("/output_schema", note).pointer;
      SourcePosition pos =
          root_.at("output_schema").is_object() ? doc_.positions.Find(at) : doc_.positions.Find("/output_schema");
      warnings_.push_back({path_, pos, "/output_schema: " + note + " (" + skill_.provider_kind + " strict mode)",
                           Diagnostic::Severity::kWarning, "strict-unenforced"});
    }
    wire_wrapped_ = strict->wrapped;
    return std::move(strict->wire);
  }

  // The services' settings of this skill (judges are made by the registry,
  // once the rubrics are loaded).
  void MakeSpecs(json::value strict_wire) {
    if (skill_.template_type == TemplateType::kHandler) {
      auto spec = std::make_shared<handler::HandlerSpec>();
      spec->skill_id = skill_.id;
      spec->handler = skill_.handler;
      spec->command = skill_.command;
      spec->dir = skill_.dir;
      spec->timeout = skill_.timeout;
      if (auto schema = skill_.output_schema) {
        spec->check_output = [schema](const json::value& output) { return schema->Validate(output); };
      }
      skill_.handler_spec = std::move(spec);
      return;
    }
    if (skill_.template_type != TemplateType::kLlmJsonGeneration) return;
    auto schema = std::make_shared<generation::AnswerSchema>();
    schema->original = skill_.output_schema_json;
    schema->text = CompactJson(skill_.output_schema_json);
    schema->compiled = skill_.output_schema;
    schema->strict_wire = std::move(strict_wire);
    schema->wrapped = wire_wrapped_;
    generation::ShareWire(*schema);
    auto spec = std::make_shared<generation::GenerationSpec>();
    spec->skill_id = skill_.id;
    spec->task_id = skill_.id;
    spec->model = skill_.model;
    spec->provider = skill_.provider;
    spec->mode = skill_.output_mode;
    spec->schema_name = generation::ResponseFormatName(skill_.id);
    spec->schema = std::move(schema);
    spec->prompt = skill_.prompt;
    spec->temperature = skill_.temperature;
    spec->max_output_tokens = skill_.max_output_tokens;
    spec->retry = skill_.retry;
    spec->retry_truncated = skill_.retry_truncated;
    spec->coercion = skill_.coercion;
    spec->rules = skill_.rules;
    spec->price = PriceOf(skill_.model);
    if (auto model = config_.models.find(skill_.model); model != config_.models.end()) {
      for (const std::string& fallback : model->second.fallbacks) {
        spec->fallbacks.push_back(Route(fallback, spec->schema));
      }
      if (!model->second.escalate_to.empty()) spec->escalation = Route(model->second.escalate_to, spec->schema);
    }
    skill_.generation = std::move(spec);
  }

  std::optional<Price> PriceOf(const std::string& model) const {
    auto entry = config_.models.find(model);
    return entry == config_.models.end() ? std::nullopt : entry->second.price;
  }

  // A fallback or escalation model (DESIGN 9.3): its provider and mode from
  // the models table, and the schema with that provider's strict copy. A
  // strict mode that cannot take the schema runs the validation loop there.
  generation::ModelRoute Route(const std::string& model,
                               const std::shared_ptr<const generation::AnswerSchema>& primary) {
    generation::ModelRoute route{model, config_.ProviderFor(model).value_or(""), config_.StructuredOutputFor(model),
                                 primary, PriceOf(model)};
    const std::string kind = config_.KindOf(route.provider);
    if (route.mode != OutputMode::kNative && route.mode != OutputMode::kTool) return route;  // no wire used
    auto schema = std::make_shared<generation::AnswerSchema>(*primary);
    schema->strict_wire = nullptr;  // the simulated provider takes the schema as written
    schema->wrapped = false;
    if (kind != "simulated") {
      auto dialect = generation::DialectOf(kind);
      auto wire = generation::MakeStrictSchema(skill_.output_schema_json, dialect);
      if (wire) {
        schema->strict_wire = std::move(wire->wire);
        schema->wrapped = wire->wrapped;
      } else {
        Warn("/model",
             "fallback or escalation model \"" + model + "\" cannot take this schema in " + kind + " strict mode (" +
                 wire.error() + "); it runs the validation loop",
             "fallback-unstrict");
        route.mode = OutputMode::kNone;
      }
    }
    generation::ShareWire(*schema);
    route.schema = std::move(schema);
    return route;
  }

  const std::string& path_;
  const YamlDocument& doc_;
  const json::object& root_;
  const Config& config_;
  std::vector<Diagnostic>& warnings_;
  std::vector<Diagnostic> errors_;
  bool wire_wrapped_ = false;  // the strict wire schema wraps the root as {"value": ...}
  std::map<std::string, YamlDocument> schema_docs_;
  std::vector<std::string> allow_;  // lint.allow
  Skill skill_;
};

}  // namespace

namespace {

std::expected<Skill, std::vector<Diagnostic>> LoadSkillDocument(
    const std::string& path, std::expected<YamlDocument, Diagnostic> doc, const Config& config,
    const std::function<bool(std::string_view)>& is_known_handler, std::vector<Diagnostic>& warnings) {
  if (!doc) return std::unexpected(std::vector<Diagnostic>{doc.error()});
  auto problems = CheckAgainstEmbeddedSchema(*doc, path, "skill.schema.json");
  if (problems.empty()) {
    SkillLoader loader(path, *doc, config, warnings);
    return loader.Load(is_known_handler);
  }
  // Every problem of the file in one run (DESIGN 9.8): the descriptor's
  // schema errors, then what the loader finds in the rest. The loader reads
  // a schema-valid descriptor; one that is not may trip it over a value of
  // the wrong type, which its schema error already names.
  if (!doc->value.is_object()) return std::unexpected(std::move(problems));
  std::vector<Diagnostic> later;
  SkillLoader loader(path, *doc, config, later);
  try {
    auto skill = loader.Load(is_known_handler);
    if (!skill) later.insert(later.end(), skill.error().begin(), skill.error().end());
  } catch (const std::exception&) {
  }
  for (auto& d : later) {
    // Findings at the top of the file are about missing keys, which a schema
    // error (a misspelt key, a wrong template_type) has already explained.
    if (d.position.line <= 1 && d.position.column <= 1) continue;
    bool repeated = std::any_of(problems.begin(), problems.end(), [&](const Diagnostic& p) {
      return p.position.line == d.position.line && p.position.column == d.position.column;
    });
    if (!repeated) problems.push_back(std::move(d));
  }
  std::stable_sort(problems.begin(), problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.position.line, a.position.column) < std::pair(b.position.line, b.position.column);
  });
  return std::unexpected(std::move(problems));
}

}  // namespace

std::expected<Skill, std::vector<Diagnostic>> LoadSkillFile(
    const std::string& path, const Config& config, const std::function<bool(std::string_view)>& is_known_handler,
    std::vector<Diagnostic>& warnings) {
  return LoadSkillDocument(path, LoadYamlFile(path), config, is_known_handler, warnings);
}

std::expected<Skill, std::vector<Diagnostic>> LoadSkillText(
    const std::string& path, std::string_view text, const Config& config,
    const std::function<bool(std::string_view)>& is_known_handler, std::vector<Diagnostic>& warnings) {
  return LoadSkillDocument(path, ParseYamlText(path, text), config, is_known_handler, warnings);
}

}  // namespace skillrunner
