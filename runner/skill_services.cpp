#include "runner/skill_services.h"

#include "runner/exec_rules.h"
#include "runner/skill_runner.h"
#include "services/common/json_text.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

bool Passed(const json::value& verdict) { return verdict.as_object().at("pass").as_bool(); }

// The rejected output's attempt says why it was not used.
void MarkRejected(Attempt& attempt, const json::value& verdict) {
  attempt.kind = AttemptKind::kReview;
  attempt.errors.clear();
  for (const auto& issue : verdict.as_object().at("issues").as_array()) {
    if (issue.is_string()) attempt.errors.push_back({"", "review: " + std::string(issue.get_string())});
  }
}

}  // namespace

std::string ReviewFeedback(const json::value& verdict, bool answer_shown) {
  auto list = [&](std::string_view key) {
    std::string out;
    const json::object* obj = verdict.if_object();
    const json::value* items = obj ? obj->if_contains(key) : nullptr;
    if (items == nullptr || !items->is_array()) return out;
    for (const auto& item : items->get_array()) {
      if (item.is_string()) out += "- " + std::string(item.get_string()) + "\n";
    }
    return out;
  };
  std::string out =
      std::string(answer_shown ? "A reviewer rejected this answer:\n" : "A reviewer rejected an earlier answer:\n") +
      list("issues");
  if (std::string fixes = list("suggested_fixes"); !fixes.empty()) out += "Suggested fixes:\n" + fixes;
  out += "Answer again with these fixed.";
  return out;
}

boost::asio::awaitable<Result<Produced>> HandlerSkills::Run(const Skill& skill, const json::value& input,
                                                            InvocationContext& ctx) {
  auto output = co_await handlers_->Run(*skill.handler_spec, input, ctx);
  if (!output) co_return std::unexpected(std::move(output.error()));
  co_return Produced{std::move(*output), nullptr};
}

boost::asio::awaitable<Result<json::value>> GenerationSkills::ReviewAndRecord(const Skill& skill, Produced& produced,
                                                                              const json::value& input,
                                                                              bool regenerate_on_fail,
                                                                              InvocationContext& ctx) {
  InvocationContext judging = ctx.Fork(1);
  auto verdict = co_await reviewer_->Review(*skill.judge, produced.value, &input, judging);
  Attempt attempt = std::move(*produced.attempt);
  produced.attempt.reset();
  if (verdict && regenerate_on_fail && !Passed(*verdict)) MarkRejected(attempt, *verdict);
  ctx.AddAttempt(std::move(attempt));
  ctx.Join(std::move(judging));
  co_return verdict;
}

boost::asio::awaitable<Result<Produced>> GenerationSkills::Run(const Skill& skill, const json::value& input,
                                                               InvocationContext& ctx) {
  // No coroutine: the generation's awaitable is handed back as it is.
  if (!skill.judge || !skill.review) return generation_->Generate(*skill.generation, input, nullptr, ctx);
  return GenerateAndReview(skill, input, ctx);
}

boost::asio::awaitable<Result<Produced>> GenerationSkills::GenerateAndReview(const Skill& skill,
                                                                             const json::value& input,
                                                                             InvocationContext& ctx) {
  auto first = co_await generation_->Generate(*skill.generation, input, nullptr, ctx);
  if (!first) co_return first;
  const bool retry_once = skill.review->retry_once;
  auto verdict = co_await ReviewAndRecord(skill, *first, input, retry_once, ctx);
  if (!verdict) co_return std::unexpected(std::move(verdict.error()));
  if (Passed(*verdict) || !retry_once) {
    ctx.review() = std::move(*verdict);
    co_return Produced{std::move(first->value), nullptr};
  }
  const bool fresh = skill.generation->retry.strategy == generation::RetryStrategy::kFresh;
  const generation::Regeneration regeneration{ReviewFeedback(*verdict, !fresh), CompactJson(first->value)};
  auto second = co_await generation_->Generate(*skill.generation, input, &regeneration, ctx);
  if (!second) {
    co_return std::unexpected(std::move(second.error().WithContext("regeneration after a failed review")));
  }
  auto final_verdict = co_await ReviewAndRecord(skill, *second, input, false, ctx);
  if (!final_verdict) co_return std::unexpected(std::move(final_verdict.error()));
  final_verdict->as_object()["first"] = std::move(*verdict);
  ctx.review() = std::move(*final_verdict);
  co_return Produced{std::move(second->value), nullptr};
}

boost::asio::awaitable<Result<Produced>> ReviewSkills::Run(const Skill& skill, const json::value& input,
                                                           InvocationContext& ctx) {
  const json::object* in = input.if_object();
  const json::value* subject = in ? in->if_contains("subject") : nullptr;
  if (subject == nullptr) {
    co_return std::unexpected(Error{
        ErrorCode::kInputInvalid, "a review needs a \"subject\"", {{"", "missing required property \"subject\""}}, {}});
  }
  auto verdict = co_await reviewer_->Review(*skill.judge, *subject, in->if_contains("context"), ctx);
  if (!verdict) co_return std::unexpected(std::move(verdict.error()));
  co_return Produced{std::move(*verdict), nullptr};
}

void InstallServices(SkillRunner& runner, const ServiceDeps& deps) {
  auto handlers = std::make_shared<handler::HandlerService>(deps.process_runner);
  auto generation = std::make_shared<generation::LlmGenerationService>(
      deps.providers, deps.downgrades, deps.sessions, deps.retry_options,
      std::make_shared<ExecRules>(deps.rule_runner != nullptr ? *deps.rule_runner : deps.process_runner));
  auto reviewer = std::make_shared<review::Reviewer>(deps.providers, deps.downgrades, deps.retry_options);
  runner.RegisterService(TemplateType::kHandler, std::make_shared<HandlerSkills>(handlers));
  runner.RegisterService(TemplateType::kLlmJsonGeneration, std::make_shared<GenerationSkills>(generation, reviewer));
  runner.RegisterService(TemplateType::kLlmReview, std::make_shared<ReviewSkills>(reviewer));
  runner.SetJudge(reviewer);
}

}  // namespace skillrunner
