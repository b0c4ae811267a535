// Loads and checks one skill descriptor (design.md §3, §8 "Descriptors").
#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "runner/tree/descriptor_reader.h"
#include "runner/tree/lint_codes.h"
#include "runner/tree/skill_registry.h"
#include "runner/tree/skill_rollout.h"
#include "runner/tree/skill_routing.h"
#include "runner/tree/skill_schemas.h"
#include "services/common/json_pointer.h"
#include "services/common/json_text.h"
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

// Reads one schema-valid descriptor into a Skill: its plain keys, lint,
// retry, validators, review gate, shape, prompt and fault script here; its
// schemas (skill_schemas) and its routing (skill_routing) beside.
class SkillLoader {
 public:
  SkillLoader(const std::string& path, const YamlDocument& doc, const Config& config, std::vector<Diagnostic>& warnings)
      : reader_(path, doc, warnings), config_(config) {}

  std::expected<Skill, std::vector<Diagnostic>> Load(const std::function<bool(std::string_view)>& is_known_handler) {
    skill_.file = reader_.path();
    skill_.dir = std::filesystem::path(reader_.path()).parent_path();
    skill_.descriptor = reader_.doc().value;
    skill_.id = Str("id");
    skill_.version = static_cast<int>(Int("version", 1));
    skill_.version_at = reader_.doc().positions.Find("/version");
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
    if (Has("max_concurrent")) skill_.max_concurrent = static_cast<int>(Int("max_concurrent", 1));
    if (auto* cmd = reader_.root().if_contains("command")) {
      for (const auto& arg : cmd->as_array()) skill_.command.emplace_back(arg.as_string());
    }
    std::string type = Str("template_type");
    if (type == "LLM_JSON_GENERATION") {
      skill_.template_type = TemplateType::kLlmJsonGeneration;
    } else if (type == "LLM_REVIEW") {
      skill_.template_type = TemplateType::kLlmReview;
    }
    const std::size_t first_warning = reader_.warnings().size();
    LoadLint();
    LoadRetry();
    LoadValidators();
    LoadReview();
    CheckShape(is_known_handler);
    LoadPrompt();
    LoadSkillSchemas(reader_, skill_);
    LoadRollout(reader_, skill_);
    SkillRouting routing(reader_, config_, skill_);
    routing.CheckModel();
    CheckSimulation();
    json::value strict_wire = routing.ResolveOutputMode();
    Acknowledge(reader_.warnings(), first_warning, allow_);
    if (!reader_.errors().empty()) return std::unexpected(std::move(reader_.errors()));
    routing.MakeSpecs(std::move(strict_wire));
    return std::move(skill_);
  }

 private:
  bool Has(std::string_view key) const { return reader_.Has(key); }
  std::string Str(std::string_view key) const { return reader_.Str(key); }
  std::int64_t Int(std::string_view key, std::int64_t fallback) const { return reader_.Int(key, fallback); }
  double Num(std::string_view key, double fallback) const { return reader_.Num(key, fallback); }
  static std::int64_t IntOf(const json::value& v, std::int64_t fallback = 0) {
    return DescriptorReader::IntOf(v, fallback);
  }
  void Error(const std::string& pointer, const std::string& message, std::string code = "skill-invalid") {
    reader_.Error(pointer, message, std::move(code));
  }

  // `lint: {allow: [code, ...]}`: the warnings of this skill it acknowledges.
  void LoadLint() {
    const auto* lint = reader_.root().if_contains("lint");
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
    auto* retry = reader_.root().if_contains("retry");
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

  // `validators:` (design.md §9.2); every path a JSON pointer.
  void LoadValidators() {
    auto* validators = reader_.root().if_contains("validators");
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
    auto* review = reader_.root().if_contains("review");
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

  // Which keys each kind of skill needs and refuses (design.md §8).
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
        for (auto key : {"handler", "command", "rubric", "samples", "max_concurrent"}) {
          refuse(key, "LLM_JSON_GENERATION skills", "");
        }
        break;
      case TemplateType::kLlmReview:
        need("model", "LLM_REVIEW skills");
        need("rubric", "LLM_REVIEW skills");
        for (auto key : {"input_schema", "output_schema"}) {
          refuse(key, "LLM_REVIEW skills", " (their input is {subject, context?} and their output the verdict)");
        }
        for (auto key : {"handler", "command", "review", "prompt", "coercion", "validators", "max_concurrent"}) {
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
          refuse("max_concurrent", "handler skills other than exec", " (they start no process)");
          if (is_known_handler && !is_known_handler(skill_.handler)) {
            Error("/handler", "unknown handler \"" + skill_.handler + "\"", "reference-unknown");
          }
        }
        break;
    }
  }

  void LoadPrompt() {
    auto* prompt = reader_.root().if_contains("prompt");
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

  // The simulated provider owns the `simulation:` block (the composition
  // root hands it over); here its fault script is only checked.
  void CheckSimulation() {
    auto* simulation = reader_.root().if_contains("simulation");
    if (!simulation) return;
    const json::object& sim = simulation->as_object();
    auto* faults = sim.if_contains("faults");
    if (!faults) return;
    auto parsed = providers::ParseFaultScript(*faults, providers::FaultScriptScope::kSkill);
    if (!parsed) {
      // The script's error names a pointer relative to the script.
      auto placed = PlaceUnder("/simulation/faults", parsed.error().message);
      Error(placed.pointer, placed.message);
    }
  }

  DescriptorReader reader_;
  const Config& config_;
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
  // Every problem of the file in one run (design.md §9.8): the descriptor's
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
