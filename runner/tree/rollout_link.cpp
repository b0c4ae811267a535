// A rollout's candidate (design.md §11.2), loaded beside its stable version
// and held to it, and the judge of the rollout's online review.
#include <algorithm>
#include <boost/json/serialize.hpp>

#include "runner/tree/judges.h"
#include "runner/tree/skill_json.h"
#include "runner/tree/skill_registry.h"
#include "services/common/digest.h"
#include "services/generation/structured_generator.h"

namespace skillrunner {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kCode = "candidate-invalid";

// Where `pointer` is written in `file` (the file's start when it is not).
SourcePosition PositionIn(const std::string& file, const std::string& pointer) {
  auto doc = LoadYamlFile(file);
  return doc ? doc->positions.Find(pointer) : SourcePosition{};
}

void Refuse(std::vector<Diagnostic>& diagnostics, const std::string& file, const std::string& pointer,
            const std::string& message) {
  diagnostics.push_back(
      {file, PositionIn(file, pointer), pointer + ": " + message, Diagnostic::Severity::kError, std::string(kCode)});
}

// What makes a candidate the same skill one version on: its id, a higher
// version, the same schemas and no rollout of its own. False when it is not.
bool HoldToStable(const Skill& stable, const Skill& candidate, std::vector<Diagnostic>& diagnostics) {
  const std::string file = candidate.file.string();
  const std::size_t before = diagnostics.size();
  if (candidate.id != stable.id) {
    Refuse(diagnostics, file, "/id",
           "a candidate has its skill's id \"" + stable.id + "\" (this file says \"" + candidate.id + "\")");
  }
  if (candidate.version <= stable.version) {
    Refuse(diagnostics, file, "/version",
           "a candidate's version is higher than its stable version's: " + stable.file.filename().string() +
               " has version " + std::to_string(stable.version) + ", this file " + std::to_string(candidate.version));
  }
  for (auto [key, mine, theirs] :
       {std::tuple{"input_schema", &candidate.input_schema_json, &stable.input_schema_json},
        std::tuple{"output_schema", &candidate.output_schema_json, &stable.output_schema_json}}) {
    if (CanonicalJson(*mine) == CanonicalJson(*theirs)) continue;
    Refuse(diagnostics, file, std::string("/") + key,
           std::string("a candidate keeps its skill's ") + key +
               " (callers' stubs are built against it): change the schema in a new version of its own, without a "
               "rollout");
  }
  if (candidate.rollout) Refuse(diagnostics, file, "/rollout", "a candidate has no rollout of its own");
  return diagnostics.size() == before;
}

// The candidate's content: its descriptor and schemas as loaded (an edited candidate is a new rollout).
std::string CandidateDigest(const Skill& candidate) {
  json::object content{{"descriptor", candidate.descriptor},
                       {"input_schema", candidate.input_schema_json},
                       {"output_schema", candidate.output_schema_json}};
  return "sha256:" + Sha256Hex(CanonicalJson(content));
}

// review_pass from review gates alone (no rollout.review) needs a gate on both versions: with one,
// only that arm is ever judged, and the rollout can neither step up nor see the other arm worse.
void WarnOneSidedGate(const Skill& stable, const Skill& candidate, std::vector<Diagnostic>& diagnostics) {
  const rollout::RolloutSpec& spec = *stable.rollout;
  const auto& measures = spec.decide.measures;
  if (spec.review || static_cast<bool>(stable.review) == static_cast<bool>(candidate.review) ||
      std::find(measures.begin(), measures.end(), rollout::Measure::kReviewPass) == measures.end()) {
    return;
  }
  const std::string gated = (stable.review ? stable : candidate).file.filename().string();
  const std::string ungated = (stable.review ? candidate : stable).file.filename().string();
  const std::string file = stable.file.string();
  diagnostics.push_back({file, PositionIn(file, "/rollout"),
                         "/rollout: review_pass counts review gates' verdicts, and only " + gated +
                             " has a review gate: the calls of " + ungated +
                             " give none, so this rollout can never step up; give both the same review:, or add "
                             "rollout.review to judge both versions alike",
                         Diagnostic::Severity::kWarning, "rollout-one-sided"});
}

}  // namespace

bool SkillRegistry::LinkRollout(Skill& skill, const RegistryOptions& options, const std::string& file,
                                const ReviewerLookup& reviewers, std::vector<Diagnostic>& diagnostics) const {
  rollout::RolloutSpec& spec = *skill.rollout;
  const std::string candidate_file = spec.candidate_file.string();
  std::error_code ec;
  if (!fs::is_regular_file(spec.candidate_file, ec)) {
    Refuse(
        diagnostics, file, "/rollout/candidate",
        "no file \"" + spec.candidate + "\" in " + skill.dir.string() + " (the candidate is a skill descriptor there)");
    return false;
  }
  auto loaded = LoadSkillFile(candidate_file, config_, options.is_known_handler, diagnostics);
  if (!loaded) {
    diagnostics.insert(diagnostics.end(), loaded.error().begin(), loaded.error().end());
    return false;
  }
  const std::size_t before = diagnostics.size();
  if (!HoldToStable(skill, *loaded, diagnostics)) return false;
  if (!LinkSkill(*loaded, options, candidate_file, reviewers, diagnostics)) {
    StampCode(diagnostics, before, "reference-unknown");
    return false;
  }
  spec.key = rollout::MakeRolloutKey(skill.id, skill.version, loaded->version, CandidateDigest(*loaded));
  skill.candidate = std::make_shared<const Skill>(std::move(*loaded));
  WarnOneSidedGate(skill, *skill.candidate, diagnostics);
  return LinkOnlineJudge(skill, file, reviewers, diagnostics);
}

bool SkillRegistry::LinkOnlineJudge(Skill& skill, const std::string& file, const ReviewerLookup& reviewers,
                                    std::vector<Diagnostic>& diagnostics) const {
  const auto& review = skill.rollout->review;
  if (!review) return true;
  const std::string review_id = skill.id + ".online_review";
  Result<review::JudgeSpec> judge = std::unexpected(Error{ErrorCode::kInternal, "no judge", {}, {}});
  if (!review->skill.empty()) {
    auto reviewer = reviewers(review->skill);
    if (!reviewer) {
      Refuse(diagnostics, file, "/rollout/review/skill", reviewer.error().message);
      diagnostics.back().code = "reference-unknown";
      return false;
    }
    judge = *(*reviewer)->judge;
    judge->generation.skill_id = skill.id;
    judge->generation.task_id = review_id;
    judge->generation.schema_name = generation::ResponseFormatName(review_id + "_verdict");
  } else if (!review->rubric.empty()) {
    auto rubric = FindRubricShared(review->rubric);
    if (!rubric) {
      Refuse(diagnostics, file, "/rollout/review/rubric",
             "unknown rubric \"" + review->rubric + "\"" +
                 (FailedRubric(review->rubric) ? " (it did not load: " + *FailedRubric(review->rubric) + ")" : ""));
      diagnostics.back().code = "reference-unknown";
      return false;
    }
    judge = JudgeOnModel(skill, skill.model, config_, std::move(rubric), review_id, 1);
  } else {
    judge = *skill.judge;  // the review gate's (the loader refused a review without one)
    judge->generation.task_id = review_id;
  }
  if (!judge) {
    Refuse(diagnostics, file, "/rollout/review", judge.error().message);
    return false;
  }
  if (review->max_cost_usd_per_hour && !judge->generation.price) {
    Refuse(diagnostics, file, "/rollout/review/max_cost_usd_per_hour",
           "a spend cap needs the judge model's price: give \"" + judge->generation.model +
               "\" a price in the config's models table");
    return false;
  }
  skill.online_judge = std::make_shared<const review::JudgeSpec>(std::move(*judge));
  return true;
}

}  // namespace skillrunner
