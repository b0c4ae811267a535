#include "runner/eval/summary.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/stats/statistics.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

// A case's boolean gate (expected_match, check_pass), when its record has one.
void CountGate(std::optional<bool> held, std::size_t& total, std::size_t& passed) {
  if (!held) return;
  ++total;
  passed += *held;
}

std::optional<double> Rate(std::size_t numerator, std::size_t denominator) {
  if (denominator == 0) return std::nullopt;
  return static_cast<double>(numerator) / static_cast<double>(denominator);
}

struct CriterionTally {
  std::size_t judged = 0, passed = 0, failed = 0, indeterminate = 0;
  std::size_t rejudged = 0, agreed = 0;
  std::size_t labels[2][2] = {{0, 0}, {0, 0}};  // [judge][human], 0 = pass, 1 = fail
  std::size_t labelled = 0;
};

std::string VerdictOf(const json::value& verdict, std::string_view criterion) {
  const json::value* results = verdict.is_object() ? verdict.as_object().if_contains("criteria_results") : nullptr;
  if (!results || !results->is_array()) return "";
  for (const auto& r : results->as_array()) {
    if (!r.is_object()) continue;
    const json::value* id = r.as_object().if_contains("criterion_id");
    const json::value* v = r.as_object().if_contains("verdict");
    if (id && id->is_string() && id->as_string() == criterion && v && v->is_string())
      return std::string(v->as_string());
  }
  return "";
}

class Tally {
 public:
  explicit Tally(const std::set<std::string>* counted = nullptr, std::optional<double> min_kappa = std::nullopt)
      : counted_(counted), min_kappa_(min_kappa) {}

  void Add(const json::object& record) {
    ++cases_;
    const json::object* result = ResultOf(record);
    const json::object* metrics = MetricsOf(record);
    CaseOutcome outcome = OutcomeOf(record);
    bool gate_judge_error = IsGateJudgeError(record);
    if (result) ++valid_;
    if (outcome != CaseOutcome::kJudgeError) ++case_decided_;
    case_passed_ += outcome == CaseOutcome::kPass;
    if (gate_judge_error) ++gate_judge_errors_;
    refused_ += outcome == CaseOutcome::kRefused;
    if (std::string_view code = ErrorCodeOf(record); ErrorOf(record) != nullptr && !gate_judge_error) {
      ++errors_[code.empty() ? "UNKNOWN" : std::string(code)];
    }
    std::int64_t validation_retries = IntAt(metrics, "validation_retries").value_or(0);
    std::int64_t transient = IntAt(metrics, "transient_retries").value_or(0);
    const json::object* review = ReviewOf(record);
    bool regenerated = review && review->contains("first");
    if (result && validation_retries == 0 && transient == 0 && !regenerated) ++first_try_;
    if (validation_retries > 0 || regenerated) ++retried_;
    transient_retries_ += transient;
    ++attempts_histogram_[IntAt(metrics, "attempts").value_or(0)];
    CountAttemptKinds(AttemptsOf(record));
    // A review gate's judge runs inside the invocation: its tokens are
    // judge tokens, not the generation's (design.md §9.5).
    const GateUsage gate = GateJudgeUsage(AttemptsOf(record));
    input_tokens_ += IntAt(metrics, "input_tokens").value_or(0) - gate.in;
    output_tokens_ += IntAt(metrics, "output_tokens").value_or(0) - gate.out;
    judge_input_tokens_ += gate.in;
    judge_output_tokens_ += gate.out;
    const json::object* judge_usage = JudgeUsageOf(record);
    judge_input_tokens_ += IntAt(judge_usage, "input_tokens").value_or(0);
    cached_input_tokens_ +=
        IntAt(metrics, "cached_input_tokens").value_or(0) + IntAt(judge_usage, "cached_input_tokens").value_or(0);
    judge_output_tokens_ += IntAt(judge_usage, "output_tokens").value_or(0);
    AddCost(metrics ? metrics->if_contains("cost_usd") : nullptr, cost_);
    if (gate.cost) {  // the gate judge's share of the invocation's cost is judging, as its tokens are
      cost_ = cost_.value_or(0) - *gate.cost;
      judge_cost_ = judge_cost_.value_or(0) + *gate.cost;
    }
    AddCost(judge_usage ? judge_usage->if_contains("cost_usd") : nullptr, judge_cost_);
    AddBatchCosts(metrics, judge_usage);
    // The invocation's own latency; the record's wall time (judging included)
    // only when there are no metrics.
    std::optional<std::int64_t> latency = IntAt(metrics, "duration_ms");
    latencies_.push_back(latency ? *latency : std::llround(CaseDurationMs(record).value_or(0)));
    CountGate(ExpectedMatchOf(record), expected_total_, expected_matched_);
    CountGate(CheckPassOf(record), checked_total_, checks_passed_);
    if (outcome == CaseOutcome::kJudgeError) ++judge_errors_;
    if (review && outcome != CaseOutcome::kError && outcome != CaseOutcome::kJudgeError) {
      AddVerdict(*review, RejudgesOf(record), HumanOf(record), CaseCriteriaOf(record));
      if (std::optional<bool> held = CaseCriteriaHeld(record)) {
        ++case_criteria_decided_;
        case_criteria_passed_ += *held;
      }
    }
  }

  SkillStats ToStats(bool with_criteria) const {
    SkillStats out;
    out.cases = N(cases_);
    // Its denominator: a case whose review gate's judge failed, or that the model refused, has no output to check.
    const std::size_t checked = cases_ - gate_judge_errors_ - refused_;
    out.schema_compliance = Rate(valid_, checked);
    out.schema_checked = N(checked);
    out.case_pass_rate = Rate(case_passed_, case_decided_);  // every gate; the progress line's "cases passed"
    out.first_try_rate = Rate(first_try_, cases_);
    out.retry_rate = Rate(retried_, cases_);
    out.transient_retries = transient_retries_;
    out.truncations = N(truncations_);
    out.refusals = N(refusals_);  // refused attempts
    out.refused = N(refused_);    // cases that ended refused (REFUSED or CONTENT_FILTERED)
    out.refusal_rate = Rate(refused_, cases_);
    out.errors.emplace();
    for (const auto& [code, n] : errors_) out.errors->emplace_back(code, N(n));
    out.judged = N(judged_);
    out.judge_errors = N(judge_errors_);
    out.judge_error_rate = Rate(judge_errors_, judged_ + judge_errors_);
    out.decided = N(judged_ - indeterminate_cases_);
    out.rubric_pass_rate = Rate(passed_, judged_ - indeterminate_cases_);
    if (case_criteria_decided_ > 0) {  // design.md §12.3: the cases' own criteria, as one measure
      out.case_criteria = CaseCriteriaStats{N(case_criteria_decided_), N(case_criteria_passed_),
                                            Rate(case_criteria_passed_, case_criteria_decided_)};
    }
    out.indeterminate = N(indeterminate_cases_);
    out.indeterminate_rate = Rate(indeterminate_cases_, judged_);
    out.expected_match = Rate(expected_matched_, expected_total_);
    out.check_pass_rate = Rate(checks_passed_, checked_total_);  // of the cases with checks
    AddUsage(out);
    if (with_criteria) out.criteria = Criteria();
    return out;
  }

 private:
  static std::int64_t N(std::size_t n) { return static_cast<std::int64_t>(n); }

  void AddUsage(SkillStats& out) const {
    out.input_tokens = input_tokens_ + judge_input_tokens_;
    out.cached_input_tokens = cached_input_tokens_;  // of input_tokens, read from the providers' caches
    out.output_tokens = output_tokens_ + judge_output_tokens_;
    out.judge_input_tokens = judge_input_tokens_;
    out.judge_output_tokens = judge_output_tokens_;
    // design.md §9.4: none when no model used had a price.
    if (cost_ || judge_cost_) out.cost_usd = cost_.value_or(0) + judge_cost_.value_or(0);
    out.judge_cost_usd = judge_cost_;
    // design.md §10.6: what the batches cost, and what the same run would have cost online
    out.batched = batched_;
    out.batch_cost_usd = batch_cost_;
    out.online_cost_usd = online_cost_;
    out.latency_ms = Percentiles();
    for (const auto& [attempts, n] : attempts_histogram_)
      out.attempts_histogram.emplace_back(std::to_string(attempts), N(n));
  }

  // A record's metrics and judge usage: their batch costs, and their online
  // counterfactual (the cost itself where nothing was batched).
  void AddBatchCosts(const json::object* metrics, const json::object* judge_usage) {
    for (const json::object* usage : {metrics, judge_usage}) {
      if (usage == nullptr) continue;
      if (usage->contains("batch_cost_usd")) batched_ = true;
      AddCost(usage->if_contains("batch_cost_usd"), batch_cost_);
      const json::value* online = usage->if_contains("online_cost_usd");
      AddCost(online ? online : usage->if_contains("cost_usd"), online_cost_);
    }
  }

  bool batched_ = false;
  std::optional<double> batch_cost_;
  std::optional<double> online_cost_;
  static void AddCost(const json::value* cost, std::optional<double>& total) {
    if (cost != nullptr && cost->is_number()) total = total.value_or(0) + cost->to_number<double>();
  }

  // What a case's review gate judge used inside the invocation: its tokens and, at a priced
  // model, its cost.
  struct GateUsage {
    std::int64_t in = 0, out = 0;
    std::optional<double> cost;
  };
  static GateUsage GateJudgeUsage(const json::array* attempts) {
    GateUsage used;
    for (const auto& a : attempts ? *attempts : json::array()) {
      const json::object* attempt = a.is_object() ? &a.as_object() : nullptr;
      const json::value* role = attempt ? attempt->if_contains("role") : nullptr;
      if (!role || !role->is_string() || role->as_string() != "judge") continue;
      used.in += IntAt(attempt, "input_tokens").value_or(0);
      used.out += IntAt(attempt, "output_tokens").value_or(0);
      AddCost(attempt->if_contains("cost_usd"), used.cost);
    }
    return used;
  }

  void CountAttemptKinds(const json::array* attempts) {
    if (!attempts) return;
    for (const auto& a : *attempts) {
      const json::value* kind = a.is_object() ? a.as_object().if_contains("kind") : nullptr;
      if (!kind || !kind->is_string()) continue;
      truncations_ += kind->as_string() == "truncated";
      refusals_ += kind->as_string() == "refusal";
    }
  }

  // `own`: the case's own criteria, counted in the review's pass but not one by one (CaseCriteriaHeld).
  void AddVerdict(const json::object& review, const json::value* rejudges, const json::object* human,
                  const std::set<std::string, std::less<>>& own) {
    ++judged_;
    const json::value* pass = review.if_contains("pass");
    bool passed = pass && pass->is_bool() && pass->as_bool();
    // Only a pass can be undecided: indeterminate never fails a review, so a
    // failed review failed on a criterion that was decided.
    bool any_indeterminate = false;
    const json::value* results = review.if_contains("criteria_results");
    if (!results || !results->is_array()) {
      passed_ += passed;
      return;
    }
    for (const auto& r : results->as_array()) {
      const json::value* id = r.is_object() ? r.as_object().if_contains("criterion_id") : nullptr;
      if (!id || !id->is_string()) continue;
      std::string criterion(id->as_string());
      if (own.contains(criterion)) continue;
      const json::value* given = r.as_object().if_contains("verdict");
      std::string verdict = given && given->is_string() ? std::string(given->as_string()) : "";
      CriterionTally& tally = criteria_[criterion];
      ++tally.judged;
      tally.passed += verdict == "pass";
      tally.failed += verdict == "fail";
      tally.indeterminate += verdict == "indeterminate";
      any_indeterminate = any_indeterminate || (verdict == "indeterminate" && Counts(criterion));
      if (const json::value* label = human ? human->if_contains(criterion) : nullptr;
          label && label->is_string() && (verdict == "pass" || verdict == "fail")) {
        ++tally.labelled;
        ++tally.labels[verdict == "pass" ? 0 : 1][label->as_string() == "pass" ? 0 : 1];
      }
      if (!rejudges || !rejudges->is_array() || rejudges->as_array().empty()) continue;
      bool agree = true, compared = false;
      for (const auto& again : rejudges->as_array()) {
        if (!again.is_object() || again.as_object().contains("judge_error")) continue;
        compared = true;
        agree = agree && VerdictOf(again, criterion) == verdict;
      }
      tally.rejudged += compared;
      tally.agreed += compared && agree;
    }
    bool undecided = passed && any_indeterminate;
    indeterminate_cases_ += undecided;
    passed_ += passed && !undecided;
  }

  bool Counts(const std::string& criterion) const { return !counted_ || counted_->contains(criterion); }

  Named<CriterionStats> Criteria() const {
    Named<CriterionStats> out;
    for (const auto& [id, t] : criteria_) {
      CriterionStats c{N(t.judged),
                       N(t.passed),
                       N(t.failed),
                       N(t.indeterminate),
                       Rate(t.passed, t.passed + t.failed),
                       Rate(t.indeterminate, t.judged),
                       Counts(id)};
      if (t.rejudged > 0) {
        double agreement = static_cast<double>(t.agreed) / static_cast<double>(t.rejudged);
        c.agreement = agreement;
        c.unstable = agreement < kStableAgreement;
      }
      if (t.labelled > 0) AddCalibration(t, c);
      out.emplace_back(id, std::move(c));
    }
    return out;
  }

  // design.md §9.5: the judge against people's labels on the same cases.
  void AddCalibration(const CriterionTally& t, CriterionStats& c) const {
    const stats::Agreement agreement = stats::CohenKappa(t.labels);
    Calibration calibration;
    calibration.labelled = N(t.labelled);
    calibration.agreement = std::round(agreement.observed * 1e6) / 1e6;
    if (agreement.kappa) calibration.kappa = std::round(*agreement.kappa * 1e6) / 1e6;
    calibration.judge_pass_human_pass = N(t.labels[0][0]);
    calibration.judge_pass_human_fail = N(t.labels[0][1]);
    calibration.judge_fail_human_pass = N(t.labels[1][0]);
    calibration.judge_fail_human_fail = N(t.labels[1][1]);
    c.calibration = calibration;
    if (min_kappa_) c.uncalibrated = !agreement.kappa || *agreement.kappa < *min_kappa_;
  }

  LatencyPercentiles Percentiles() const {
    if (latencies_.empty()) return {};
    std::vector<std::int64_t> sorted = latencies_;
    std::sort(sorted.begin(), sorted.end());
    auto rank = [&](double p) {  // nearest rank
      std::size_t index = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
      return sorted[std::clamp<std::size_t>(index, 1, sorted.size()) - 1];
    };
    return {rank(0.50), rank(0.95), rank(0.99)};
  }

  std::size_t cases_ = 0, valid_ = 0, first_try_ = 0, retried_ = 0, truncations_ = 0, refusals_ = 0, refused_ = 0;
  const std::set<std::string>* counted_ = nullptr;  // null: every criterion counts
  std::size_t case_criteria_decided_ = 0, case_criteria_passed_ = 0;
  std::optional<double> min_kappa_;
  std::size_t gate_judge_errors_ = 0;
  std::size_t case_passed_ = 0, case_decided_ = 0;
  std::size_t judged_ = 0, passed_ = 0, judge_errors_ = 0, indeterminate_cases_ = 0;
  std::size_t expected_total_ = 0, expected_matched_ = 0;
  std::size_t checked_total_ = 0, checks_passed_ = 0;
  std::int64_t transient_retries_ = 0, input_tokens_ = 0, output_tokens_ = 0;
  std::int64_t judge_input_tokens_ = 0, judge_output_tokens_ = 0, cached_input_tokens_ = 0;
  std::optional<double> cost_, judge_cost_;  // USD; none while no priced model was used
  std::map<std::string, std::size_t> errors_;
  std::map<std::int64_t, std::size_t> attempts_histogram_;
  std::vector<std::int64_t> latencies_;
  std::map<std::string, CriterionTally> criteria_;
};

}  // namespace

RunSummary BuildSummary(const SummaryHeader& header, const std::vector<json::object>& records) {
  RunSummary summary;
  summary.run_id = header.run_id;
  summary.suite = header.suite;
  summary.started_at = header.started_at;
  summary.finished_at = header.finished_at;
  summary.duration_ms = header.duration_ms;
  summary.shard = header.shard;
  summary.git_ref = header.git_ref;
  summary.concurrency = header.concurrency;
  std::map<std::string, Tally> by_skill;
  auto tally_of = [&](const std::string& id) -> Tally& {
    auto it = by_skill.find(id);
    if (it != by_skill.end()) return it->second;
    auto counted = header.counted_criteria.find(id);
    return by_skill
        .emplace(id,
                 Tally(counted == header.counted_criteria.end() ? nullptr : &counted->second, header.min_judge_kappa))
        .first->second;
  };
  Tally totals;
  for (const auto& record : records) {
    tally_of(SkillLabel(record)).Add(record);
    totals.Add(record);
  }
  summary.totals = totals.ToStats(false);
  for (const auto& id : header.skills) {
    if (!summary.Skill(id)) summary.skills.emplace_back(id, tally_of(id).ToStats(true));
  }
  for (const auto& [id, tally] : by_skill) {
    if (!summary.Skill(id)) summary.skills.emplace_back(id, tally.ToStats(true));
  }
  return summary;
}

}  // namespace skillrunner::eval
