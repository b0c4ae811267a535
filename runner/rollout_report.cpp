#include "runner/rollout_report.h"

#include "services/common/iso_time.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

json::object ArmJson(const stats::ArmCounts& counts) {
  json::object arm{{"n", counts.n}, {"successes", counts.successes}};
  if (counts.n > 0) arm["rate"] = counts.Rate();
  return arm;
}

// How a measure's sequence stands against the rules: worse | not_worse | undecided.
std::string_view DecisionWord(const stats::MeasureDecision& decision) {
  if (decision.worse) return "worse";
  if (decision.non_inferior) return "not_worse";
  return "undecided";
}

}  // namespace

json::object RolloutReport(const Skill& stable, const rollout::RolloutStatus& status) {
  const rollout::RolloutSpec& spec = *stable.rollout;
  std::vector<stats::MeasureCounts> counts;
  for (const auto& t : status.tallies) counts.push_back({std::string(rollout::MeasureName(t.measure)), t.stable, t.candidate});
  stats::DecideOptions options;
  options.alpha = spec.decide.alpha;
  options.tau = spec.decide.tau;
  options.min_samples = spec.decide.min_samples;
  options.margin = spec.decide.margin;
  const stats::Decision decision = stats::Decide(counts, options);
  json::array measures;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const stats::MeasureDecision& d = decision.measures[i];
    measures.push_back(json::object{{"measure", counts[i].name},
                                    {"stable", ArmJson(counts[i].stable)},
                                    {"candidate", ArmJson(counts[i].candidate)},
                                    {"estimate", d.sequence.estimate},
                                    {"lower", d.sequence.lower},
                                    {"upper", d.sequence.upper},
                                    {"alpha", decision.alpha_each},
                                    {"decision", DecisionWord(d)}});
  }
  json::array steps;
  for (double step : spec.steps) steps.push_back(step);
  json::object report{{"skill", stable.id},
                      {"stable_version", stable.version},
                      {"candidate_version", spec.key.candidate_version},
                      {"candidate_digest", spec.key.candidate_digest},
                      {"state", rollout::StateName(status.state)},
                      {"traffic", status.traffic},
                      {"step", status.step},
                      {"steps", std::move(steps)},
                      {"measures", std::move(measures)},
                      {"reason", status.reason}};
  if (status.decided_at_ms > 0) {
    report["decided_at"] = IsoUtc(std::chrono::system_clock::time_point(std::chrono::milliseconds(status.decided_at_ms)));
  }
  return report;
}

json::array RolloutsReport(const SkillRegistry& registry, rollout::RolloutBook& book, std::string_view skill) {
  json::array out;
  for (const auto& stable : registry.skills()) {
    if (!stable->rollout || !stable->candidate || (!skill.empty() && stable->id != skill)) continue;
    out.push_back(RolloutReport(*stable, book.Status(*stable->rollout)));
  }
  return out;
}

}  // namespace skillrunner
