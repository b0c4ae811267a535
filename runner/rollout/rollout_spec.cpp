#include "runner/rollout/rollout_spec.h"

namespace skillrunner::rollout {

std::string_view MeasureName(Measure measure) { return measure == Measure::kOk ? "ok" : "review_pass"; }

std::optional<Measure> ParseMeasure(std::string_view word) {
  if (word == "ok") return Measure::kOk;
  if (word == "review_pass") return Measure::kReviewPass;
  return std::nullopt;
}

RolloutKey MakeRolloutKey(std::string skill, int stable_version, int candidate_version, std::string candidate_digest) {
  RolloutKey key{std::move(skill), stable_version, candidate_version, std::move(candidate_digest), {}};
  key.name = key.skill + "@" + std::to_string(stable_version) + ".." + std::to_string(candidate_version) + "/" +
             key.candidate_digest;
  return key;
}

}  // namespace skillrunner::rollout
