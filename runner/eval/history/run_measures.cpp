#include "runner/eval/history/run_measures.h"

#include <array>

#include "runner/eval/records/record_fields.h"

namespace skillrunner::eval {
namespace json = boost::json;

CaseGates GatesOf(const json::object& record) {
  CaseGates gates;
  const CaseOutcome outcome = OutcomeOf(record);
  gates.schema = SchemaGate(outcome);
  gates.expected = ExpectedMatchOf(record);
  const json::object* review = ReviewOf(record);
  const json::value* pass = review ? review->if_contains("pass") : nullptr;
  if (outcome != CaseOutcome::kError && outcome != CaseOutcome::kJudgeError && pass && pass->is_bool()) {
    gates.rubric = pass->as_bool();
  }
  // The skill's own gate: its final verdict rides on the result.
  const json::object* gate = GateReviewOf(record);
  const json::value* gate_pass = gate ? gate->if_contains("pass") : nullptr;
  if (outcome != CaseOutcome::kError && gate_pass && gate_pass->is_bool()) gates.review_gate = gate_pass->as_bool();
  gates.checks = CheckPassOf(record);
  return gates;
}

GateResult SchemaGate(CaseOutcome outcome) {
  if (outcome == CaseOutcome::kRefused) return std::nullopt;  // no output to check: counted as a refusal
  return outcome != CaseOutcome::kError;
}

GateResult AnsweredGate(CaseOutcome outcome) {
  if (outcome == CaseOutcome::kJudgeError) return std::nullopt;
  return outcome != CaseOutcome::kRefused;
}

GateResult CaseGate(CaseOutcome outcome, const CaseGates* gates) {
  if (outcome == CaseOutcome::kJudgeError) return std::nullopt;
  return outcome == CaseOutcome::kPass && !(gates != nullptr && gates->review_gate == false);
}

GateResult VerdictGate(const Verdicts* verdicts, const std::string& criterion) {
  if (verdicts == nullptr) return std::nullopt;
  auto it = verdicts->find(criterion);
  if (it == verdicts->end() || (it->second != "pass" && it->second != "fail")) return std::nullopt;
  return it->second == "pass";
}

Verdicts VerdictsOf(const json::object& record) {
  Verdicts verdicts;
  CaseOutcome outcome = OutcomeOf(record);
  if (outcome == CaseOutcome::kError || outcome == CaseOutcome::kJudgeError) return verdicts;
  const auto own = CaseCriteriaOf(record);  // a case's own criteria are one measure, not one each
  if (const json::array* results = ArrayAt(ReviewOf(record), "criteria_results")) {
    for (const json::value& r : *results) {
      if (!r.is_object()) continue;
      std::string_view id = TextAt(&r.as_object(), "criterion_id");
      if (own.contains(id)) continue;
      std::string_view verdict = TextAt(&r.as_object(), "verdict");
      if (!id.empty() && !verdict.empty()) verdicts[std::string(id)] = std::string(verdict);
    }
  }
  return verdicts;
}

namespace {

struct Count {
  std::int64_t successes = 0, n = 0;
  void Add(GateResult gate) {
    if (!gate) return;
    ++n;
    successes += *gate;
  }
};

// The fixed measures in the order a reader expects them; criteria follow.
constexpr std::array<const char*, 7> kGateMeasures = {"schema",      "outcome", "expected",     "rubric",
                                                      "review_gate", "checks",  "case_criteria"};

void CountRecord(const json::object& record, std::map<std::string, Count>& counts) {
  const CaseOutcome outcome = OutcomeOf(record);
  const CaseGates gates = GatesOf(record);
  counts["schema"].Add(SchemaGate(outcome));
  counts["outcome"].Add(CaseGate(outcome, &gates));
  counts["expected"].Add(gates.expected);
  counts["rubric"].Add(gates.rubric);
  counts["review_gate"].Add(gates.review_gate);
  counts["checks"].Add(gates.checks);
  if (outcome != CaseOutcome::kError && outcome != CaseOutcome::kJudgeError) {
    counts["case_criteria"].Add(CaseCriteriaHeld(record));
  }
  const Verdicts verdicts = VerdictsOf(record);
  for (const auto& [criterion, verdict] : verdicts) {
    counts["criterion:" + criterion].Add(VerdictGate(&verdicts, criterion));
  }
}

}  // namespace

std::vector<MeasureCount> CountMeasures(const std::vector<json::object>& records) {
  std::map<std::string, std::map<std::string, Count>> by_skill;
  for (const json::object& record : records) CountRecord(record, by_skill[SkillLabel(record)]);
  std::vector<MeasureCount> out;
  for (auto& [skill, counts] : by_skill) {
    for (const char* measure : kGateMeasures) {
      const Count& count = counts[measure];
      if (count.n > 0) out.push_back({skill, measure, count.successes, count.n});
    }
    for (const auto& [measure, count] : counts) {
      if (measure.starts_with("criterion:") && count.n > 0) out.push_back({skill, measure, count.successes, count.n});
    }
  }
  return out;
}

std::string MeasureLabel(const std::string& measure) {
  if (measure == "schema") return "schema compliance";
  if (measure == "outcome") return "case pass";
  if (measure == "expected") return "expected match";
  if (measure == "rubric") return "rubric pass";
  if (measure == "review_gate") return "review gate pass";
  if (measure == "checks") return "checks pass";
  if (measure == "case_criteria") return "case criteria pass";
  if (measure.starts_with("criterion:")) return "criterion " + measure.substr(10);
  return measure;
}

}  // namespace skillrunner::eval
