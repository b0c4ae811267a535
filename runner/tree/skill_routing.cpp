#include "runner/tree/skill_routing.h"

#include "runner/tree/lint_codes.h"
#include "services/common/json_text.h"
#include "services/generation/strict_schema.h"
#include "services/generation/structured_generator.h"

namespace skillrunner {
namespace json = boost::json;

// A model not in the models table is an error naming the closest ones,
// unless the config sets default_provider: then a warning says where it
// goes (design.md §9.8). --provider routes every model on purpose: no word.
void SkillRouting::CheckModel() {
  auto check = [&](const std::string& pointer, const std::string& model) {
    auto provider = config_.ProviderFor(model);
    if (config_.provider_override || config_.builtin || config_.models.contains(model)) {
      return provider.value_or("");
    }
    std::vector<std::string> known;
    for (const auto& [name, unused] : config_.models) known.push_back(name);
    std::string hint = DidYouMean(ClosestNames(model, known));
    if (!provider) {
      reader_.Error(pointer,
                    "model \"" + model + "\" is not in the models table of " + config_.source + hint +
                        "; add it there (or set default_provider)",
                    "model-unknown");
    } else {
      reader_.Warn(pointer,
                   "model \"" + model + "\" is not in the models table of " + config_.source + hint +
                       ", so it runs on the default_provider \"" + *provider + "\"",
                   "model-unlisted");
    }
    return provider.value_or("");
  };
  if (!skill_.model.empty()) skill_.provider = check("/model", skill_.model);
  if (skill_.review && skill_.review->model) check("/review/model", *skill_.review->model);
}

// native | json_object | none, and for native the strict wire schema, which
// must be computable now: a schema the provider cannot take is an error
// unless the skill chooses the validation loop.
// Returns that wire schema (null when none is needed).
json::value SkillRouting::ResolveOutputMode() {
  if (skill_.template_type == TemplateType::kHandler) return nullptr;
  skill_.provider_kind = config_.KindOf(skill_.provider);
  skill_.output_mode = skill_.structured_output.value_or(config_.StructuredOutputFor(skill_.model));
  if (skill_.template_type != TemplateType::kLlmJsonGeneration) return nullptr;
  const std::string dialect_kind = config_.DialectKindOf(skill_.model);
  if (skill_.output_mode == OutputMode::kTool && dialect_kind != "openai" && dialect_kind != "anthropic" &&
      dialect_kind != "simulated") {
    reader_.Error(reader_.Has("structured_output") ? "/structured_output" : "/model",
                  "tool mode needs an openai, anthropic or bedrock provider or a Claude model on vertex; model \"" +
                      skill_.model + "\" runs on a " + skill_.provider_kind + " one");
    return nullptr;
  }
  const bool strict_wire = skill_.output_mode == OutputMode::kNative || skill_.output_mode == OutputMode::kTool;
  if (!strict_wire || skill_.provider_kind == "simulated") return nullptr;
  if (!skill_.output_schema) return nullptr;  // already reported
  auto dialect = generation::DialectOf(dialect_kind);
  auto strict = generation::MakeStrictSchema(skill_.output_schema_json, dialect);
  if (!strict) {
    reader_.Error("/output_schema",
                  "the " + skill_.provider_kind + " strict mode of model \"" + skill_.model +
                      "\" cannot take this schema: " + strict.error().message +
                      " (set `structured_output: none` to use the validation loop)",
                  "strict-unsupported");
    return nullptr;
  }
  for (const auto& note : strict->client_only) {
    // A note starts with the pointer into the schema it is about.
    std::string at = PlaceUnder("/output_schema", note).pointer;
    SourcePosition pos = reader_.root().at("output_schema").is_object()
                             ? reader_.doc().positions.Find(at)
                             : reader_.doc().positions.Find("/output_schema");
    reader_.Add({reader_.path(), pos, "/output_schema: " + note + " (" + skill_.provider_kind + " strict mode)",
                 Diagnostic::Severity::kWarning, "strict-unenforced"});
  }
  wire_wrapped_ = strict->wrapped;
  return std::move(strict->wire);
}

// The services' settings of this skill (judges are made by the registry,
// once the rubrics are loaded).
void SkillRouting::MakeSpecs(json::value strict_wire) {
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
  spec->skill_version = skill_.version;
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
    for (const std::string& other : model->second.on_refusal) spec->on_refusal.push_back(Route(other, spec->schema));
  }
  skill_.generation = std::move(spec);
}

std::optional<Price> SkillRouting::PriceOf(const std::string& model) const {
  auto entry = config_.models.find(model);
  return entry == config_.models.end() ? std::nullopt : entry->second.price;
}

// A fallback or escalation model (design.md §9.3): its provider and mode from
// the models table, and the schema with that provider's strict copy. A
// strict mode that cannot take the schema runs the validation loop there.
generation::ModelRoute SkillRouting::Route(const std::string& model,
                                           const std::shared_ptr<const generation::AnswerSchema>& primary) {
  generation::ModelRoute route{model, config_.ProviderFor(model).value_or(""), config_.StructuredOutputFor(model),
                               primary, PriceOf(model)};
  const std::string kind = config_.KindOf(route.provider);
  if (route.mode != OutputMode::kNative && route.mode != OutputMode::kTool) return route;  // no wire used
  auto schema = std::make_shared<generation::AnswerSchema>(*primary);
  schema->strict_wire = nullptr;  // the simulated provider takes the schema as written
  schema->wrapped = false;
  if (kind != "simulated") {
    auto dialect = generation::DialectOf(config_.DialectKindOf(model));
    auto wire = generation::MakeStrictSchema(skill_.output_schema_json, dialect);
    if (wire) {
      schema->strict_wire = std::move(wire->wire);
      schema->wrapped = wire->wrapped;
    } else {
      reader_.Warn("/model",
                   "fallback or escalation model \"" + model + "\" cannot take this schema in " + kind +
                       " strict mode (" + wire.error().message + "); it runs the validation loop",
                   "fallback-unstrict");
      route.mode = OutputMode::kNone;
    }
  }
  generation::ShareWire(*schema);
  route.schema = std::move(schema);
  return route;
}

}  // namespace skillrunner
