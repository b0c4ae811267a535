#pragma once

// Who judges what: the core maps a skill, its gate or an eval entry and the
// config onto review::JudgeSpec, once, at load.

#include <memory>
#include <string>
#include <vector>

#include "runner/tree/config.h"
#include "runner/tree/skill.h"
#include "services/review/reviewer.h"

namespace skillrunner {

// An LLM_REVIEW skill's judge: its model and settings; temperature 0 unless
// the descriptor sets `temperature`; `samples` from the descriptor (default 1).
review::JudgeSpec JudgeForReviewSkill(const Skill& skill, std::shared_ptr<const review::Rubric> rubric,
                                      const Config& config);

// A judge of `skill`'s outputs on `model`, called `review_id`: the model's
// provider and structured-output mode (the skill's own when `model` is the
// skill's), temperature 0, at least 1024 output tokens, the skill's retry
// policy. CONFIG_INVALID "the judge model \"<m>\" is not in the models table
// and there is no default_provider" when the config cannot route `model`.
Result<review::JudgeSpec> JudgeOnModel(const Skill& skill, const std::string& model, const Config& config,
                                       std::shared_ptr<const review::Rubric> rubric, std::string review_id,
                                       int samples);

// `rubric` with `extra` criteria after its own, its judge prepared again (design.md §12.3: a
// case's own criteria, judged for that case only). CONFIG_INVALID when the judge cannot be made.
Result<std::shared_ptr<const review::Rubric>> RubricWithCriteria(const review::Rubric& rubric,
                                                                 std::vector<review::Criterion> extra);

// A generation skill's `review:` gate ("<skill>.review").
Result<review::JudgeSpec> JudgeForGate(const Skill& skill, const Config& config,
                                       std::shared_ptr<const review::Rubric> rubric);

}  // namespace skillrunner
