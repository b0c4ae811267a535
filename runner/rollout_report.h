#pragma once

// What `rollouts.list` and `skillrunner rollout status` show of a skill's
// rollout (design.md §11.2): the arms, the traffic and step, each measure's
// counts, estimates, confidence sequence and decision, and the last
// decision's reason and time.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string_view>

#include "runner/rollout/rollout_book.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner {

// One rollout: {skill, stable_version, candidate_version, candidate_digest,
// state, traffic, step, steps, measures: [{measure, stable: {n, successes,
// rate}, candidate: {...}, estimate, lower, upper, alpha, decision}], reason,
// decided_at}.
boost::json::object RolloutReport(const Skill& stable, const rollout::RolloutStatus& status);

// Every skill of `registry` with a rollout (only `skill` when not empty), as `book` has it.
boost::json::array RolloutsReport(const SkillRegistry& registry, rollout::RolloutBook& book, std::string_view skill);

}  // namespace skillrunner
