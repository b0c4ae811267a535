#include "runner/tree/skill_rollout.h"

#include <vector>

#include "services/common/json_pointer.h"
#include "services/common/json_text.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

double Share(const json::value& v) { return v.to_number<double>(); }

// `steps` and `traffic`: the ramp rises strictly and starts at the traffic.
void LoadTraffic(DescriptorReader& reader, const json::object& block, rollout::RolloutSpec& spec) {
  if (const auto* steps = block.if_contains("steps")) {
    const json::array& list = steps->as_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      spec.steps.push_back(Share(list[i]));
      if (i > 0 && spec.steps[i] <= spec.steps[i - 1]) {
        reader.Error("/rollout/steps/" + std::to_string(i),
                     "steps rise strictly: " + CompactJson(list[i]) + " after " + CompactJson(list[i - 1]));
      }
    }
  }
  const auto* traffic = block.if_contains("traffic");
  if (traffic == nullptr && spec.steps.empty()) {
    reader.Error("/rollout", "a rollout needs the candidate's share of calls: traffic: 0.1, or steps: [0.1, ...]");
    return;
  }
  spec.traffic = traffic ? Share(*traffic) : spec.steps.front();
  if (traffic && !spec.steps.empty() && spec.traffic != spec.steps.front()) {
    reader.Error("/rollout/traffic", "the traffic is where the steps start: " + CompactJson(*traffic) +
                                         " is not steps[0] (" + CompactJson(block.at("steps").as_array()[0]) +
                                         "); leave traffic out, or make them equal");
  }
}

void LoadOnlineReview(DescriptorReader& reader, const json::object& r, const Skill& skill,
                      rollout::OnlineReview& review) {
  if (const auto* v = r.if_contains("rubric")) review.rubric = std::string(v->as_string());
  if (const auto* v = r.if_contains("skill")) review.skill = std::string(v->as_string());
  if (!review.rubric.empty() && !review.skill.empty()) {
    reader.Error("/rollout/review", "give the online review a rubric or an LLM_REVIEW skill, not both");
  } else if (review.rubric.empty() && review.skill.empty() && !skill.review) {
    reader.Error("/rollout/review",
                 "the online review needs a judge: rubric: ID or skill: ID (this skill has no review gate to share)");
  }
  if (const auto* v = r.if_contains("sample")) review.sample = v->to_number<double>();
  if (const auto* v = r.if_contains("max_cost_usd_per_hour")) review.max_cost_usd_per_hour = v->to_number<double>();
  if (const auto* v = r.if_contains("queue")) review.queue = static_cast<int>(DescriptorReader::IntOf(*v));
  if (const auto* v = r.if_contains("concurrency")) review.concurrency = static_cast<int>(DescriptorReader::IntOf(*v));
  if (const auto* v = r.if_contains("max_wait_ms"))
    review.max_wait = std::chrono::milliseconds(DescriptorReader::IntOf(*v));
}

void LoadDecide(const json::object& d, rollout::DecideRules& decide, bool reviewed) {
  if (const auto* v = d.if_contains("alpha")) decide.alpha = v->to_number<double>();
  if (const auto* v = d.if_contains("tau")) decide.tau = v->to_number<double>();
  if (const auto* v = d.if_contains("min_samples")) decide.min_samples = DescriptorReader::IntOf(*v);
  if (const auto* v = d.if_contains("margin")) decide.margin = v->to_number<double>();
  // Unsaid, the measures are what can be counted: ok, and review_pass when answers are judged.
  if (!reviewed) decide.measures = {rollout::Measure::kOk};
  if (const auto* v = d.if_contains("measures")) {
    decide.measures.clear();
    for (const auto& word : v->as_array()) {
      if (auto measure = rollout::ParseMeasure(word.as_string())) decide.measures.push_back(*measure);
    }
  }
}

// review_pass counts verdicts: the online review's or the review gate's. Without either it has
// nothing to count.
void CheckMeasures(DescriptorReader& reader, const rollout::RolloutSpec& spec, const Skill& skill) {
  for (rollout::Measure measure : spec.decide.measures) {
    if (measure == rollout::Measure::kReviewPass && !spec.review && !skill.review) {
      reader.Error("/rollout/decide/measures",
                   "review_pass counts review verdicts, and this skill has none: add rollout.review (a rubric or "
                   "skill and a sample), or measure [ok] alone");
    }
  }
}

}  // namespace

void LoadRollout(DescriptorReader& reader, Skill& skill) {
  const auto* found = reader.root().if_contains("rollout");
  if (found == nullptr || !found->is_object()) return;
  const json::object& block = found->as_object();
  if (skill.template_type != TemplateType::kLlmJsonGeneration) {
    reader.Error("/rollout", "only LLM_JSON_GENERATION skills roll out a candidate (this one is " +
                                 std::string(TemplateTypeName(skill.template_type)) + ")");
    return;
  }
  rollout::RolloutSpec spec;
  spec.candidate = std::string(block.at("candidate").as_string());
  spec.candidate_file = skill.dir / spec.candidate;
  if (spec.candidate_file.filename() == skill.file.filename()) {
    reader.Error("/rollout/candidate", "the candidate is a file of its own beside " + skill.file.filename().string() +
                                           " (candidate.yaml, say)");
  }
  LoadTraffic(reader, block, spec);
  if (const auto* v = block.if_contains("sticky")) {
    spec.sticky = std::string(v->as_string());
    std::vector<std::string> tokens;
    if (!ParsePointer(spec.sticky, tokens) || spec.sticky.empty()) {
      reader.Error("/rollout/sticky",
                   "\"" + spec.sticky + "\" is not a JSON pointer into the input (/customer_id, say)");
    }
  }
  if (const auto* v = block.if_contains("review")) {
    LoadOnlineReview(reader, v->as_object(), skill, spec.review.emplace());
  }
  static const json::object kNoRules;
  const auto* decide = block.if_contains("decide");
  // Answers are judged online, or inline by the skill's review gate (its verdicts count).
  LoadDecide(decide ? decide->as_object() : kNoRules, spec.decide, spec.review || skill.review);
  CheckMeasures(reader, spec, skill);
  if (const auto* v = block.if_contains("on_worse"); v && v->as_string() == "hold") {
    spec.on_worse = rollout::OnWorse::kHold;
  }
  skill.rollout = std::move(spec);
}

}  // namespace skillrunner
