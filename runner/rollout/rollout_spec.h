#pragma once

// A skill's `rollout:` block as loaded (design.md §11.2): the candidate
// version beside the stable one, the share of calls it takes, the online
// review of answered calls and the rules of the sequential decision.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::rollout {

// What a rollout compares the arms by.
enum class Measure {
  kOk,          // the call succeeded by the skill's own doing
  kReviewPass,  // a judged answer passed its review
};
// "ok" | "review_pass"
std::string_view MeasureName(Measure measure);
std::optional<Measure> ParseMeasure(std::string_view word);

enum class OnWorse {
  kRollback,  // traffic 0, state rolled_back
  kHold,      // reported only
};

// `rollout.review`: which answered calls are judged, after their answer was sent.
struct OnlineReview {
  // The judge: a rubric (with the skill's model) or an LLM_REVIEW skill;
  // both empty: the skill's own review gate.
  std::string rubric;
  std::string skill;
  double sample = 0.2;                          // share of each arm's answered calls judged
  std::optional<double> max_cost_usd_per_hour;  // judge spend cap over a rolling hour
  int queue = 1000;                             // judged calls waiting at most
  int concurrency = 4;                          // judged at once
  std::chrono::milliseconds max_wait{60000};    // a sample older than this when its turn comes is dropped
};

// `rollout.decide`.
struct DecideRules {
  double alpha = 0.05;
  double tau = 0.05;
  std::int64_t min_samples = 200;
  double margin = 0.02;
  std::vector<Measure> measures{Measure::kOk, Measure::kReviewPass};
};

// Which rollout: an edited candidate (another digest) or another pair of
// versions is another rollout, with state of its own.
struct RolloutKey {
  std::string skill;
  int stable_version = 0;
  int candidate_version = 0;
  std::string candidate_digest;  // "sha256:<hex>" of the candidate as loaded (its descriptor and schemas)
  std::string name;              // "SKILL@STABLE..CANDIDATE/DIGEST": what the state is kept under
};
RolloutKey MakeRolloutKey(std::string skill, int stable_version, int candidate_version, std::string candidate_digest);

struct RolloutSpec {
  std::string candidate;                 // as written: a file in the skill's folder
  std::filesystem::path candidate_file;  // the skill's folder / candidate
  RolloutKey key;                        // set when the candidate is loaded
  double traffic = 0;                    // the share of calls at the start: steps[0] when steps are given
  std::vector<double> steps;             // the ramp, rising; empty: traffic throughout
  std::string sticky;                    // a JSON pointer into the input; empty: none
  std::optional<OnlineReview> review;
  DecideRules decide;
  OnWorse on_worse = OnWorse::kRollback;
};

}  // namespace skillrunner::rollout
