#pragma once

// A case's gates as the paired comparisons count them (design.md §9.5, §10.1),
// and a run's measures counted from its records: what the history keeps per
// run (run_measures) so that trends need no pass over every case, and what a
// comparison pairs case by case. One place, so the trend, the baseline
// comparison and the viewer count the same way.

#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/eval/records/case_outcome.h"

namespace skillrunner::eval {

// One case's gates (design.md §9.5): valid output, expected match, rubric pass
// (the suite's judge), the skill's own review gate (its final verdict in
// the result; design.md §10.1) and the case's own checks (`check_pass`:
// checks and exec_check together); nullopt where the gate did not apply or
// said nothing.
struct CaseGates {
  std::optional<bool> schema;
  std::optional<bool> expected;
  std::optional<bool> rubric;
  std::optional<bool> review_gate = std::nullopt;
  std::optional<bool> checks = std::nullopt;
};
CaseGates GatesOf(const boost::json::object& record);

// nullopt: the gate says nothing about this case.
using GateResult = std::optional<bool>;
// criterion id -> verdict ("pass", "fail", "indeterminate")
using Verdicts = std::map<std::string, std::string>;

// The schema gate: the case has a valid output (a refusal says nothing of it).
GateResult SchemaGate(CaseOutcome outcome);
// The refusal gate: the model answered (neither refused nor filtered); a judge error says nothing.
GateResult AnsweredGate(CaseOutcome outcome);
// The case passes when every gate it has passes, the skill's own review gate
// included; a judge error says nothing.
GateResult CaseGate(CaseOutcome outcome, const CaseGates* gates);
// A criterion's gate: its verdict pass or fail (indeterminate or absent says nothing).
GateResult VerdictGate(const Verdicts* verdicts, const std::string& criterion);
// The criteria verdicts of a judged case (none for an error or a judge error).
Verdicts VerdictsOf(const boost::json::object& record);

// One measure of one skill in one run: `successes` of `n` cases passed it.
struct MeasureCount {
  std::string skill;  // its label: "greet", or "greet@2" for a candidate
  // schema | outcome | expected | rubric | review_gate | checks | case_criteria | criterion:<id>
  std::string measure;
  std::int64_t successes = 0;
  std::int64_t n = 0;
  bool operator==(const MeasureCount&) const = default;
};

// Every measure with at least one case that the gate counts, by skill then
// measure (schema and outcome first, criteria last).
std::vector<MeasureCount> CountMeasures(const std::vector<boost::json::object>& records);

// A measure's name for people: "schema compliance", "criterion clarity".
std::string MeasureLabel(const std::string& measure);

}  // namespace skillrunner::eval
