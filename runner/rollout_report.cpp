#include "runner/rollout_report.h"

#include <cstdio>

#include "runner/online_review.h"
#include "services/common/clock.h"
#include "services/common/iso_time.h"
#include "services/common/text.h"
#include "services/common/trace_context.h"

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
  for (const auto& t : status.tallies)
    counts.push_back({std::string(rollout::MeasureName(t.measure)), t.stable, t.candidate});
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
    report["decided_at"] =
        IsoUtc(std::chrono::system_clock::time_point(std::chrono::milliseconds(status.decided_at_ms)));
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

namespace {

void Header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP " + std::string(name) + " " + std::string(help) + "\n# TYPE " + std::string(name) + " " +
         std::string(type) + "\n";
}

std::string Line(std::string_view name, const std::vector<std::pair<std::string_view, std::string_view>>& labels,
                 double value) {
  std::string out(name);
  out += "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += (i ? "," : "") + std::string(labels[i].first) + "=\"" + PrometheusLabel(labels[i].second) + "\"";
  }
  char number[32];
  std::snprintf(number, sizeof number, "%.17g", value);
  return out + "} " + number + "\n";
}

// What the online review judged and what judging cost, apart from the calls' own figures.
void AppendJudging(std::string& out, const OnlineReviews& reviews) {
  Header(out, "skillrunner_rollout_judged_total", "counter", "Answers the online review judged, by skill.");
  for (const auto& [skill, n] : reviews.Judged()) {
    out += Line("skillrunner_rollout_judged_total", {{"skill", skill}}, static_cast<double>(n));
  }
  Header(out, "skillrunner_rollout_judge_cost_usd_total", "counter",
         "What the online review's judging cost (priced judge models only), by skill.");
  for (const auto& [skill, usd] : reviews.JudgeCostUsd()) {
    out += Line("skillrunner_rollout_judge_cost_usd_total", {{"skill", skill}}, usd);
  }
}

}  // namespace

std::string RolloutPrometheus(const SkillRegistry& registry, rollout::RolloutBook& book, const OnlineReviews* reviews) {
  std::vector<std::pair<const Skill*, rollout::RolloutStatus>> rollouts;
  for (const auto& stable : registry.skills()) {
    if (stable->rollout && stable->candidate) rollouts.emplace_back(stable.get(), book.Status(*stable->rollout));
  }
  if (rollouts.empty()) return {};
  std::string out;
  Header(out, "skillrunner_rollout_traffic_ratio", "gauge", "The candidate's share of calls now, by skill.");
  for (const auto& [skill, status] : rollouts)
    out += Line("skillrunner_rollout_traffic_ratio", {{"skill", skill->id}}, status.traffic);
  Header(out, "skillrunner_rollout_state", "gauge", "1 for the state each skill's rollout is in, else 0.");
  for (const auto& [skill, status] : rollouts) {
    for (auto state : {rollout::State::kRunning, rollout::State::kPaused, rollout::State::kReady,
                       rollout::State::kRolledBack, rollout::State::kHeld}) {
      out += Line("skillrunner_rollout_state", {{"skill", skill->id}, {"state", rollout::StateName(state)}},
                  state == status.state ? 1 : 0);
    }
  }
  Header(out, "skillrunner_rollout_samples_total", "counter",
         "Counted calls of each rollout, by arm, measure and outcome (success or failure).");
  for (const auto& [skill, status] : rollouts) {
    for (const auto& t : status.tallies) {
      for (auto [arm, counts] : {std::pair{"stable", t.stable}, std::pair{"candidate", t.candidate}}) {
        for (auto [outcome, n] :
             {std::pair{"success", counts.successes}, std::pair{"failure", counts.n - counts.successes}}) {
          out += Line(
              "skillrunner_rollout_samples_total",
              {{"skill", skill->id}, {"arm", arm}, {"measure", rollout::MeasureName(t.measure)}, {"outcome", outcome}},
              static_cast<double>(n));
        }
      }
    }
  }
  Header(
      out, "skillrunner_rollout_samples_dropped_total", "counter",
      "Answers sampled for the online review and not judged, by reason (queue_full, spend_cap, expired, judge_error).");
  if (reviews != nullptr) {
    AppendJudging(out, *reviews);
    for (const auto& [skill, reasons] : reviews->Dropped()) {
      for (const auto& [reason, n] : reasons) {
        out += Line("skillrunner_rollout_samples_dropped_total", {{"skill", skill}, {"reason", reason}},
                    static_cast<double>(n));
      }
    }
  }
  return out;
}

telemetry::Span DecisionSpan(const rollout::RolloutEvent& event) {
  const auto now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(RealClock().WallNow().time_since_epoch()).count();
  telemetry::Span span;
  span.trace_id = NewTraceId();
  span.span_id = NewSpanId();
  span.name = "skillrunner.rollout.decision";
  span.start_unix_nano = span.end_unix_nano = now;
  const rollout::RolloutStatus& status = event.status;
  span.attributes = {{"skillrunner.skill", event.key.skill},
                     {"skillrunner.rollout.stable_version", static_cast<std::int64_t>(event.key.stable_version)},
                     {"skillrunner.rollout.candidate_version", static_cast<std::int64_t>(event.key.candidate_version)},
                     {"skillrunner.rollout.from", std::string(rollout::StateName(event.from))},
                     {"skillrunner.rollout.state", std::string(rollout::StateName(status.state))},
                     {"skillrunner.rollout.traffic", status.traffic},
                     {"skillrunner.rollout.step", static_cast<std::int64_t>(status.step)},
                     {"skillrunner.rollout.reason", status.reason}};
  const bool worse = status.state == rollout::State::kRolledBack || status.state == rollout::State::kHeld;
  span.status = worse ? telemetry::SpanStatus::kError : telemetry::SpanStatus::kOk;
  if (worse) span.status_message = status.reason;
  return span;
}

}  // namespace skillrunner
