#include "runner/tree/judges.h"

#include <algorithm>

#include "services/review/prepared_judge.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

generation::GenerationSpec JudgeBase(const Skill& skill, std::string review_id, double temperature,
                                     int max_output_tokens) {
  generation::GenerationSpec base;
  base.skill_id = skill.id;
  base.skill_version = skill.version;
  base.task_id = std::move(review_id);
  base.temperature = temperature;
  base.max_output_tokens = max_output_tokens;
  base.retry = skill.retry;
  base.retry_truncated = skill.retry_truncated;
  return base;
}

review::JudgeRoute RouteOf(const std::string& model, const Config& config) {
  std::string provider = config.ProviderFor(model).value_or("");
  auto entry = config.models.find(model);
  return review::JudgeRoute{model, provider, config.DialectKindOf(model), config.StructuredOutputFor(model),
                            entry == config.models.end() ? std::nullopt : entry->second.price};
}

// The judge model's fallbacks, escalation (design.md §9.3) and on_refusal (§11.5) from the models table.
void AddRoutes(review::JudgeSpec& judge, const std::string& model, const Config& config) {
  auto entry = config.models.find(model);
  if (entry == config.models.end()) return;
  std::vector<review::JudgeRoute> fallbacks;
  for (const std::string& fallback : entry->second.fallbacks) fallbacks.push_back(RouteOf(fallback, config));
  std::optional<review::JudgeRoute> escalation;
  if (!entry->second.escalate_to.empty()) escalation = RouteOf(entry->second.escalate_to, config);
  std::vector<review::JudgeRoute> on_refusal;
  for (const std::string& other : entry->second.on_refusal) on_refusal.push_back(RouteOf(other, config));
  review::SetJudgeRoutes(judge, fallbacks, escalation, on_refusal);
}

}  // namespace

review::JudgeSpec JudgeForReviewSkill(const Skill& skill, std::shared_ptr<const review::Rubric> rubric,
                                      const Config& config) {
  const json::object* descriptor = skill.descriptor.if_object();
  double temperature = descriptor && descriptor->contains("temperature") ? skill.temperature : 0.0;
  int samples = 1;
  if (const json::value* v = descriptor ? descriptor->if_contains("samples") : nullptr; v && v->is_int64()) {
    samples = static_cast<int>(std::max<std::int64_t>(1, v->get_int64()));
  }
  review::JudgeRoute route{skill.model, skill.provider, config.DialectKindOf(skill.model), skill.output_mode,
                           RouteOf(skill.model, config).price};
  review::JudgeSpec judge = review::MakeJudgeSpec(
      std::move(rubric), route, JudgeBase(skill, skill.id, temperature, skill.max_output_tokens), samples);
  AddRoutes(judge, skill.model, config);
  return judge;
}

Result<review::JudgeSpec> JudgeOnModel(const Skill& skill, const std::string& model, const Config& config,
                                       std::shared_ptr<const review::Rubric> rubric, std::string review_id,
                                       int samples) {
  review::JudgeRoute route{model, skill.provider, config.DialectKindOf(skill.model), skill.output_mode,
                           RouteOf(model, config).price};
  if (model != skill.model) {
    auto provider = config.ProviderFor(model);
    if (!provider) {
      return Fail(ErrorCode::kConfigInvalid,
                  "the judge model \"" + model + "\" is not in the models table and there is no default_provider");
    }
    route.provider = *provider;
    route.provider_kind = config.DialectKindOf(model);
    route.mode = config.StructuredOutputFor(model);
  }
  review::JudgeSpec judge = review::MakeJudgeSpec(
      std::move(rubric), route, JudgeBase(skill, std::move(review_id), 0.0, std::max(1024, skill.max_output_tokens)),
      samples);
  AddRoutes(judge, model, config);
  return judge;
}

Result<review::JudgeSpec> JudgeForGate(const Skill& skill, const Config& config,
                                       std::shared_ptr<const review::Rubric> rubric) {
  const ReviewGate& gate = *skill.review;
  auto judge = JudgeOnModel(skill, gate.model.value_or(skill.model), config, std::move(rubric), skill.id + ".review",
                            gate.samples);
  if (!judge) return std::unexpected(std::move(judge.error().WithContext("review gate of skill \"" + skill.id + "\"")));
  return judge;
}

Result<std::shared_ptr<const review::Rubric>> RubricWithCriteria(const review::Rubric& rubric,
                                                                 std::vector<review::Criterion> extra) {
  auto extended = std::make_shared<review::Rubric>(rubric);
  for (review::Criterion& criterion : extra) extended->criteria.push_back(std::move(criterion));
  auto judge = review::PrepareJudge(*extended);
  if (!judge) return Fail(std::move(judge.error()), "rubric " + rubric.id + " with the case's criteria");
  extended->judge = std::move(*judge);
  return std::shared_ptr<const review::Rubric>(std::move(extended));
}

}  // namespace skillrunner
