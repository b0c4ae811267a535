#pragma once

// What `rollouts.list` and `skillrunner rollout status` show of a skill's
// rollout (design.md §11.2): the arms, the traffic and step, each measure's
// counts, estimates, confidence sequence and decision, and the last
// decision's reason and time.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "runner/rollout/rollout_book.h"
#include "runner/tree/skill_registry.h"
#include "services/telemetry/span.h"

namespace skillrunner {

// One rollout: {skill, stable_version, candidate_version, candidate_digest,
// state, traffic, step, steps, measures: [{measure, stable: {n, successes,
// rate}, candidate: {...}, estimate, lower, upper, alpha, decision}], reason,
// decided_at}.
boost::json::object RolloutReport(const Skill& stable, const rollout::RolloutStatus& status);

// Every skill of `registry` with a rollout (only `skill` when not empty), as `book` has it.
boost::json::array RolloutsReport(const SkillRegistry& registry, rollout::RolloutBook& book, std::string_view skill);

class OnlineReviews;

// The rollouts' Prometheus lines: skillrunner_rollout_traffic_ratio{skill},
// skillrunner_rollout_state{skill,state} (1 for the state it is in, else 0),
// skillrunner_rollout_samples_total{skill,arm,measure,outcome},
// skillrunner_rollout_judged_total{skill}, skillrunner_rollout_judge_cost_usd_total{skill} and
// skillrunner_rollout_samples_dropped_total{skill,reason}.
std::string RolloutPrometheus(const SkillRegistry& registry, rollout::RolloutBook& book, const OnlineReviews* reviews);

// The span a decision or command is traced as (design.md §11.2): "skillrunner.rollout.decision",
// its skill, versions, the state it left and the one it took, traffic, step and reason.
telemetry::Span DecisionSpan(const rollout::RolloutEvent& event);

}  // namespace skillrunner
