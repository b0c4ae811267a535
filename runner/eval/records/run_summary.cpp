#include "runner/eval/records/run_summary.h"

#include <algorithm>
#include <array>

#include "runner/eval/records/record_fields.h"

namespace skillrunner::eval {
namespace json = boost::json;

// The parts, each written (and read) once; defined below, used by the members before them.
static json::object SkillStatsJson(const SkillStats& s);
static SkillStats SkillStatsFromJson(const json::object& json);
static json::object PairedJson(const PairedMeasure& p);
static json::object SkillComparisonJson(const SkillComparison& c);
static json::object CaseRefJson(const CaseRef& ref);
static json::object FlipsJson(const Named<GateFlips>& flips);
static json::object BreachJson(const Breach& b);
namespace {

json::value OrNull(const std::optional<double>& value) { return value ? json::value(*value) : json::value(nullptr); }
json::value OrNull(const std::optional<std::int64_t>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

std::optional<bool> BoolAt(const json::object* object, std::string_view key) {
  const json::value* found = object ? object->if_contains(key) : nullptr;
  if (found == nullptr || !found->is_bool()) return std::nullopt;
  return found->as_bool();
}

std::int64_t CountAt(const json::object* object, std::string_view key) { return IntAt(object, key).value_or(0); }

// A count that may be absent: written only when the summary has it.
void PutCount(json::object& out, std::string_view key, const MaybeCount& count) {
  if (count) out[key] = *count;
}

json::object CountsJson(const Named<std::int64_t>& counts) {
  json::object out;
  for (const auto& [key, n] : counts) out[key] = n;
  return out;
}

Named<std::int64_t> CountsFromJson(const json::object* counts) {
  Named<std::int64_t> out;
  if (counts == nullptr) return out;
  for (const auto& [key, n] : *counts) {
    if (std::optional<double> number = AsNumber(&n)) out.emplace_back(key, static_cast<std::int64_t>(*number));
  }
  return out;
}

json::value IntervalJson(const std::optional<std::pair<double, double>>& interval) {
  if (!interval) return nullptr;
  return json::array{interval->first, interval->second};
}

std::optional<std::pair<double, double>> IntervalFromJson(const json::object* object, std::string_view key) {
  const json::array* pair = ArrayAt(object, key);
  if (pair == nullptr || pair->size() != 2) return std::nullopt;
  std::optional<double> low = AsNumber(&(*pair)[0]), high = AsNumber(&(*pair)[1]);
  if (!low || !high) return std::nullopt;
  return std::make_pair(*low, *high);
}

// Each object member of `json` through `parse`, in order.
template <typename T, typename Parse>
Named<T> NamedFromJson(const json::object* object, Parse parse) {
  Named<T> out;
  if (object == nullptr) return out;
  for (const auto& [key, value] : *object) {
    if (const json::object* member = value.if_object()) out.emplace_back(key, parse(*member));
  }
  return out;
}

json::object CalibrationJson(const Calibration& c) {
  return json::object{{"labelled", c.labelled},
                      {"agreement", c.agreement},
                      {"kappa", OrNull(c.kappa)},
                      {"confusion", json::object{{"judge_pass_human_pass", c.judge_pass_human_pass},
                                                 {"judge_pass_human_fail", c.judge_pass_human_fail},
                                                 {"judge_fail_human_pass", c.judge_fail_human_pass},
                                                 {"judge_fail_human_fail", c.judge_fail_human_fail}}}};
}

Calibration CalibrationFromJson(const json::object& json) {
  Calibration c;
  c.labelled = CountAt(&json, "labelled");
  c.agreement = NumberAt(&json, "agreement").value_or(0);
  c.kappa = NumberAt(&json, "kappa");
  const json::object* confusion = ObjectAt(&json, "confusion");
  c.judge_pass_human_pass = CountAt(confusion, "judge_pass_human_pass");
  c.judge_pass_human_fail = CountAt(confusion, "judge_pass_human_fail");
  c.judge_fail_human_pass = CountAt(confusion, "judge_fail_human_pass");
  c.judge_fail_human_fail = CountAt(confusion, "judge_fail_human_fail");
  return c;
}

json::object CriterionJson(const CriterionStats& c) {
  json::object out{{"judged", c.judged},
                   {"passed", c.passed},
                   {"failed", c.failed},
                   {"indeterminate", c.indeterminate},
                   {"pass_rate", OrNull(c.pass_rate)},
                   {"indeterminate_rate", OrNull(c.indeterminate_rate)},
                   {"counted", c.counted}};
  if (c.agreement) out["agreement"] = *c.agreement;
  if (c.unstable) out["unstable"] = *c.unstable;
  if (c.calibration) out["calibration"] = CalibrationJson(*c.calibration);
  if (c.uncalibrated) out["uncalibrated"] = *c.uncalibrated;
  return out;
}

CriterionStats CriterionFromJson(const json::object& json) {
  CriterionStats c;
  c.judged = CountAt(&json, "judged");
  c.passed = CountAt(&json, "passed");
  c.failed = CountAt(&json, "failed");
  c.indeterminate = CountAt(&json, "indeterminate");
  c.pass_rate = NumberAt(&json, "pass_rate");
  c.indeterminate_rate = NumberAt(&json, "indeterminate_rate");
  c.counted = BoolAt(&json, "counted").value_or(true);
  c.agreement = NumberAt(&json, "agreement");
  c.unstable = BoolAt(&json, "unstable");
  if (const json::object* calibration = ObjectAt(&json, "calibration"))
    c.calibration = CalibrationFromJson(*calibration);
  c.uncalibrated = BoolAt(&json, "uncalibrated");
  return c;
}

void RatesJson(const SkillStats& s, json::object& out) {
  PutCount(out, "judged", s.judged);
  PutCount(out, "judge_errors", s.judge_errors);
  out["judge_error_rate"] = OrNull(s.judge_error_rate);
  PutCount(out, "decided", s.decided);
  out["rubric_pass_rate"] = OrNull(s.rubric_pass_rate);
  if (s.case_criteria) {
    out["case_criteria"] = json::object{{"decided", s.case_criteria->decided},
                                        {"passed", s.case_criteria->passed},
                                        {"pass_rate", OrNull(s.case_criteria->pass_rate)}};
  }
  PutCount(out, "indeterminate", s.indeterminate);
  out["indeterminate_rate"] = OrNull(s.indeterminate_rate);
  out["expected_match"] = OrNull(s.expected_match);
  out["check_pass_rate"] = OrNull(s.check_pass_rate);
}

void UsageJson(const SkillStats& s, json::object& out) {
  PutCount(out, "input_tokens", s.input_tokens);
  PutCount(out, "cached_input_tokens", s.cached_input_tokens);
  PutCount(out, "output_tokens", s.output_tokens);
  PutCount(out, "judge_input_tokens", s.judge_input_tokens);
  PutCount(out, "judge_output_tokens", s.judge_output_tokens);
  out["cost_usd"] = OrNull(s.cost_usd);
  out["judge_cost_usd"] = OrNull(s.judge_cost_usd);
  if (s.batched) {
    out["batch_cost_usd"] = OrNull(s.batch_cost_usd);
    out["online_cost_usd"] = OrNull(s.online_cost_usd);
  }
  out["latency_ms"] = json::object{
      {"p50", OrNull(s.latency_ms.p50)}, {"p95", OrNull(s.latency_ms.p95)}, {"p99", OrNull(s.latency_ms.p99)}};
  out["attempts_histogram"] = CountsJson(s.attempts_histogram);
}

void RatesFromJson(const json::object& json, SkillStats& s) {
  s.judged = IntAt(&json, "judged");
  s.judge_errors = IntAt(&json, "judge_errors");
  s.judge_error_rate = NumberAt(&json, "judge_error_rate");
  s.decided = IntAt(&json, "decided");
  s.rubric_pass_rate = NumberAt(&json, "rubric_pass_rate");
  if (const json::object* own = ObjectAt(&json, "case_criteria")) {
    s.case_criteria = CaseCriteriaStats{CountAt(own, "decided"), CountAt(own, "passed"), NumberAt(own, "pass_rate")};
  }
  s.indeterminate = IntAt(&json, "indeterminate");
  s.indeterminate_rate = NumberAt(&json, "indeterminate_rate");
  s.expected_match = NumberAt(&json, "expected_match");
  s.check_pass_rate = NumberAt(&json, "check_pass_rate");
}

void UsageFromJson(const json::object& json, SkillStats& s) {
  s.input_tokens = IntAt(&json, "input_tokens");
  s.cached_input_tokens = IntAt(&json, "cached_input_tokens");
  s.output_tokens = IntAt(&json, "output_tokens");
  s.judge_input_tokens = IntAt(&json, "judge_input_tokens");
  s.judge_output_tokens = IntAt(&json, "judge_output_tokens");
  s.cost_usd = NumberAt(&json, "cost_usd");
  s.judge_cost_usd = NumberAt(&json, "judge_cost_usd");
  s.batched = json.contains("batch_cost_usd");
  s.batch_cost_usd = NumberAt(&json, "batch_cost_usd");
  s.online_cost_usd = NumberAt(&json, "online_cost_usd");
  const json::object* latency = ObjectAt(&json, "latency_ms");
  s.latency_ms = {IntAt(latency, "p50"), IntAt(latency, "p95"), IntAt(latency, "p99")};
  s.attempts_histogram = CountsFromJson(ObjectAt(&json, "attempts_histogram"));
}

PairedMeasure PairedFromJson(const json::object& json) {
  PairedMeasure p;
  p.cases = CountAt(&json, "cases");
  p.baseline_rate = NumberAt(&json, "baseline_rate");
  p.baseline_interval = IntervalFromJson(&json, "baseline_interval");
  p.rate = NumberAt(&json, "rate");
  p.interval = IntervalFromJson(&json, "interval");
  p.pass_to_fail = CountAt(&json, "pass_to_fail");
  p.fail_to_pass = CountAt(&json, "fail_to_pass");
  p.p_value = NumberAt(&json, "p_value").value_or(1);
  p.significant = BoolAt(&json, "significant").value_or(false);
  p.underpowered = BoolAt(&json, "underpowered").value_or(false);
  return p;
}

CaseRef CaseRefFromJson(const json::object& json) {
  return CaseRef{std::string(TextAt(&json, "skill")), std::string(TextAt(&json, "case")), IntAt(&json, "repeat")};
}

std::vector<CaseRef> CaseRefsFromJson(const json::array* refs) {
  std::vector<CaseRef> out;
  for (const json::value& ref : refs ? *refs : json::array()) {
    if (const json::object* o = ref.if_object()) out.push_back(CaseRefFromJson(*o));
  }
  return out;
}

json::array FlippedJson(const std::vector<FlippedCase>& flipped) {
  json::array out;
  for (const FlippedCase& flip : flipped) {
    json::object entry = CaseRefJson(flip.at);
    entry["from"] = flip.from;
    entry["to"] = flip.to;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<FlippedCase> FlippedFromJson(const json::array* flipped) {
  std::vector<FlippedCase> out;
  for (const json::value& entry : flipped ? *flipped : json::array()) {
    const json::object* o = entry.if_object();
    if (o == nullptr) continue;
    out.push_back({CaseRefFromJson(*o), std::string(TextAt(o, "from")), std::string(TextAt(o, "to"))});
  }
  return out;
}

Named<GateFlips> FlipsFromJson(const json::object* flips) {
  return NamedFromJson<GateFlips>(flips, [](const json::object& gate) {
    return GateFlips{CaseRefsFromJson(ArrayAt(&gate, "pass_to_fail")),
                     CaseRefsFromJson(ArrayAt(&gate, "fail_to_pass"))};
  });
}

SkillComparison SkillComparisonFromJson(const json::object& json) {
  SkillComparison c;
  for (const auto& [key, value] : json) {
    if (key.ends_with("_delta") && key != "rubric_pass_rate_stable_delta") c.deltas.emplace_back(key, AsNumber(&value));
  }
  c.criteria = NamedFromJson<CriterionComparison>(ObjectAt(&json, "criteria"), [](const json::object& entry) {
    CriterionComparison criterion{NumberAt(&entry, "pass_rate_delta"), std::nullopt};
    if (const json::object* paired = ObjectAt(&entry, "paired")) criterion.paired = PairedFromJson(*paired);
    return criterion;
  });
  if (json.contains("rubric_pass_rate_stable_delta")) {
    c.rubric_pass_rate_stable_delta = NumberAt(&json, "rubric_pass_rate_stable_delta");
  }
  c.paired = NamedFromJson<PairedMeasure>(ObjectAt(&json, "paired"), PairedFromJson);
  return c;
}

BaselineComparison BaselineFromJson(const json::object& json) {
  BaselineComparison b;
  const std::string_view status = TextAt(&json, "status");
  b.status = status == "none"      ? BaselineComparison::Status::kNone
             : status == "skipped" ? BaselineComparison::Status::kSkipped
                                   : BaselineComparison::Status::kCompared;
  b.reason = TextAt(&json, "reason");
  b.history = TextAt(&json, "history");
  b.run_id = TextAt(&json, "run_id");
  b.started_at = TextAt(&json, "started_at");
  b.regression_alpha = NumberAt(&json, "regression_alpha").value_or(0.05);
  b.skills = NamedFromJson<SkillComparison>(ObjectAt(&json, "skills"), SkillComparisonFromJson);
  b.flipped = FlippedFromJson(ArrayAt(&json, "flipped"));
  b.flips = FlipsFromJson(ObjectAt(&json, "flips"));
  return b;
}

json::object VersionJson(const VersionComparison& v) {
  json::object out{{"skill", v.skill},
                   {"stable_version", v.stable_version},
                   {"candidate_version", v.candidate_version},
                   {"candidate", v.candidate},
                   {"regression_alpha", v.regression_alpha}};
  for (auto& [key, value] : SkillComparisonJson(v.comparison)) out[key] = std::move(value);
  out["flipped"] = FlippedJson(v.flipped);
  out["flips"] = FlipsJson(v.flips);
  return out;
}

VersionComparison VersionFromJson(const json::object& json) {
  VersionComparison v;
  v.skill = TextAt(&json, "skill");
  v.stable_version = CountAt(&json, "stable_version");
  v.candidate_version = CountAt(&json, "candidate_version");
  v.candidate = TextAt(&json, "candidate");
  v.regression_alpha = NumberAt(&json, "regression_alpha").value_or(0.05);
  v.comparison = SkillComparisonFromJson(json);
  v.flipped = FlippedFromJson(ArrayAt(&json, "flipped"));
  v.flips = FlipsFromJson(ObjectAt(&json, "flips"));
  return v;
}

Breach BreachFromJson(const json::object& json) {
  Breach b;
  b.skill = TextAt(&json, "skill");
  if (const json::value* criterion = json.if_contains("criterion"); criterion && criterion->is_string()) {
    b.criterion = std::string(criterion->as_string());
  }
  b.threshold = TextAt(&json, "threshold");
  b.measure = TextAt(&json, "measure");
  b.kind = TextAt(&json, "kind");
  b.limit = NumberAt(&json, "limit").value_or(0);
  if (const json::value* actual = json.if_contains("actual")) b.actual = *actual;
  b.against_stable = TextAt(&json, "against") == "stable";
  b.message = TextAt(&json, "message");
  return b;
}

// The members FromJson reads; any other is kept in `other`.
constexpr std::array<std::string_view, 22> kKnown = {
    "run_id", "suite",  "started_at", "finished_at", "duration_ms",    "shard",          "git_ref",  "concurrency",
    "totals", "skills", "versions",   "baseline",    "thresholds",     "status",         "breaches", "fail_on",
    "cache",  "out",    "batches",    "resubmitted", "batch_cost_usd", "online_cost_usd"};

std::optional<std::string> OptionalText(const json::object& json, std::string_view key) {
  const json::value* found = json.if_contains(key);
  if (found == nullptr || !found->is_string()) return std::nullopt;
  return std::string(found->as_string());
}

void RunFactsFromJson(const json::object& json, RunSummary& s) {
  s.thresholds = ObjectAt(&json, "thresholds") ? *ObjectAt(&json, "thresholds") : json::object();
  s.status = TextAt(&json, "status");
  for (const json::value& breach : ArrayAt(&json, "breaches") ? *ArrayAt(&json, "breaches") : json::array()) {
    if (const json::object* o = breach.if_object()) s.breaches.push_back(BreachFromJson(*o));
  }
  s.fail_on = TextAt(&json, "fail_on");
  if (const json::object* cache = ObjectAt(&json, "cache")) {
    s.cache = CacheFacts{std::string(TextAt(cache, "file")), std::string(TextAt(cache, "mode")), CountAt(cache, "hits"),
                         CountAt(cache, "misses")};
  }
  s.out = TextAt(&json, "out");
  s.batches = IntAt(&json, "batches");
  s.resubmitted = IntAt(&json, "resubmitted");
  s.batch_cost_usd = NumberAt(&json, "batch_cost_usd");
  s.online_cost_usd = NumberAt(&json, "online_cost_usd");
}

void RunFactsJson(const RunSummary& s, json::object& out) {
  // A summary whose thresholds were not checked yet (BuildSummary's) has none of these three.
  const bool checked = !s.status.empty() || !s.breaches.empty();
  if (checked || !s.thresholds.empty()) out["thresholds"] = s.thresholds;
  if (!s.status.empty()) out["status"] = s.status;
  if (checked) out["breaches"] = BreachesJson(s.breaches);
  if (!s.fail_on.empty()) out["fail_on"] = s.fail_on;
  if (s.cache) {
    out["cache"] = json::object{
        {"file", s.cache->file}, {"mode", s.cache->mode}, {"hits", s.cache->hits}, {"misses", s.cache->misses}};
  }
  if (!s.out.empty()) out["out"] = s.out;
  if (s.batches) {
    out["batches"] = *s.batches;
    out["resubmitted"] = s.resubmitted.value_or(0);
    out["batch_cost_usd"] = OrNull(s.batch_cost_usd);
    out["online_cost_usd"] = OrNull(s.online_cost_usd);
  }
}

}  // namespace

std::optional<double> SkillStats::Measure(std::string_view name) const {
  auto count = [](std::optional<std::int64_t> n) {
    return n ? std::optional<double>(static_cast<double>(*n)) : std::nullopt;
  };
  auto latency = count;
  if (name == "schema_compliance") return schema_compliance;
  if (name == "case_pass_rate") return case_pass_rate;
  if (name == "first_try_rate") return first_try_rate;
  if (name == "retry_rate") return retry_rate;
  if (name == "refusal_rate") return refusal_rate;
  if (name == "judge_error_rate") return judge_error_rate;
  if (name == "rubric_pass_rate") return rubric_pass_rate;
  if (name == "indeterminate_rate") return indeterminate_rate;
  if (name == "expected_match") return expected_match;
  if (name == "check_pass_rate") return check_pass_rate;
  if (name == "case_criteria") return case_criteria ? case_criteria->pass_rate : std::nullopt;
  if (name == "cost_usd") return cost_usd;
  if (name == "judge_cost_usd") return judge_cost_usd;
  if (name == "cases") return count(cases);
  if (name == "input_tokens") return count(input_tokens);
  if (name == "output_tokens") return count(output_tokens);
  if (name == "judged") return count(judged);
  if (name == "judge_errors") return count(judge_errors);
  if (name == "refused") return count(refused);
  if (name == "latency_p50_ms") return latency(latency_ms.p50);
  if (name == "latency_p95_ms") return latency(latency_ms.p95);
  if (name == "latency_p99_ms") return latency(latency_ms.p99);
  return std::nullopt;
}

std::optional<double> SkillComparison::Delta(std::string_view name) const {
  const std::optional<double>* delta = Find(deltas, name);
  return delta ? *delta : std::nullopt;
}

std::string_view BaselineComparison::StatusName() const {
  switch (status) {
    case Status::kNone:
      return "none";
    case Status::kSkipped:
      return "skipped";
    case Status::kCompared:
      break;
  }
  return "compared";
}

static json::object SkillStatsJson(const SkillStats& s) {
  json::object out;
  PutCount(out, "cases", s.cases);
  out["schema_compliance"] = OrNull(s.schema_compliance);
  PutCount(out, "schema_checked", s.schema_checked);
  out["case_pass_rate"] = OrNull(s.case_pass_rate);
  out["first_try_rate"] = OrNull(s.first_try_rate);
  out["retry_rate"] = OrNull(s.retry_rate);
  PutCount(out, "transient_retries", s.transient_retries);
  PutCount(out, "truncations", s.truncations);
  PutCount(out, "refusals", s.refusals);
  PutCount(out, "refused", s.refused);
  out["refusal_rate"] = OrNull(s.refusal_rate);
  if (s.errors) out["errors"] = CountsJson(*s.errors);
  RatesJson(s, out);
  UsageJson(s, out);
  if (s.criteria) {
    json::object criteria;
    for (const auto& [id, c] : *s.criteria) criteria[id] = CriterionJson(c);
    out["criteria"] = std::move(criteria);
  }
  return out;
}

static SkillStats SkillStatsFromJson(const json::object& json) {
  SkillStats s;
  s.cases = IntAt(&json, "cases");
  s.schema_compliance = NumberAt(&json, "schema_compliance");
  s.schema_checked = IntAt(&json, "schema_checked");
  s.case_pass_rate = NumberAt(&json, "case_pass_rate");
  s.first_try_rate = NumberAt(&json, "first_try_rate");
  s.retry_rate = NumberAt(&json, "retry_rate");
  s.transient_retries = IntAt(&json, "transient_retries");
  s.truncations = IntAt(&json, "truncations");
  s.refusals = IntAt(&json, "refusals");
  s.refused = IntAt(&json, "refused");
  s.refusal_rate = NumberAt(&json, "refusal_rate");
  if (const json::object* errors = ObjectAt(&json, "errors")) s.errors = CountsFromJson(errors);
  RatesFromJson(json, s);
  UsageFromJson(json, s);
  if (const json::object* criteria = ObjectAt(&json, "criteria")) {
    s.criteria = NamedFromJson<CriterionStats>(criteria, CriterionFromJson);
  }
  return s;
}

static json::object PairedJson(const PairedMeasure& p) {
  json::object out{{"cases", p.cases},
                   {"baseline_rate", OrNull(p.baseline_rate)},
                   {"baseline_interval", IntervalJson(p.baseline_interval)},
                   {"rate", OrNull(p.rate)},
                   {"interval", IntervalJson(p.interval)},
                   {"pass_to_fail", p.pass_to_fail},
                   {"fail_to_pass", p.fail_to_pass},
                   {"p_value", p.p_value},
                   {"significant", p.significant}};
  if (p.underpowered) out["underpowered"] = true;
  return out;
}

static json::object SkillComparisonJson(const SkillComparison& c) {
  json::object out;
  for (const auto& [key, delta] : c.deltas) out[key] = OrNull(delta);
  json::object criteria;
  for (const auto& [id, criterion] : c.criteria) {
    json::object entry{{"pass_rate_delta", OrNull(criterion.pass_rate_delta)}};
    if (criterion.paired) entry["paired"] = PairedJson(*criterion.paired);
    criteria[id] = std::move(entry);
  }
  out["criteria"] = std::move(criteria);
  if (c.rubric_pass_rate_stable_delta) out["rubric_pass_rate_stable_delta"] = OrNull(*c.rubric_pass_rate_stable_delta);
  json::object paired;
  for (const auto& [gate, measure] : c.paired) paired[gate] = PairedJson(measure);
  out["paired"] = std::move(paired);
  return out;
}

static json::object CaseRefJson(const CaseRef& ref) {
  json::object out{{"skill", ref.skill}, {"case", ref.case_id}};
  if (ref.repeat) out["repeat"] = *ref.repeat;
  return out;
}

static json::object FlipsJson(const Named<GateFlips>& flips) {
  json::object out;
  for (const auto& [gate, cases] : flips) {
    json::array down, up;
    for (const CaseRef& ref : cases.pass_to_fail) down.push_back(CaseRefJson(ref));
    for (const CaseRef& ref : cases.fail_to_pass) up.push_back(CaseRefJson(ref));
    out[gate] = json::object{{"pass_to_fail", std::move(down)}, {"fail_to_pass", std::move(up)}};
  }
  return out;
}

json::object BaselineJson(const BaselineComparison& b) {
  if (b.status == BaselineComparison::Status::kSkipped) return {{"status", "skipped"}, {"reason", b.reason}};
  if (b.status == BaselineComparison::Status::kNone) {
    return {{"status", "none"}, {"reason", b.reason}, {"history", b.history}};
  }
  json::object skills;
  for (const auto& [id, comparison] : b.skills) skills[id] = SkillComparisonJson(comparison);
  return json::object{{"status", "compared"},        {"run_id", b.run_id},
                      {"started_at", b.started_at},  {"regression_alpha", b.regression_alpha},
                      {"skills", std::move(skills)}, {"flipped", FlippedJson(b.flipped)},
                      {"flips", FlipsJson(b.flips)}};
}

static json::object BreachJson(const Breach& b) {
  json::object out{{"skill", b.skill}};
  if (b.criterion) out["criterion"] = *b.criterion;
  out["threshold"] = b.threshold;
  out["measure"] = b.measure;
  out["kind"] = b.kind;
  out["limit"] = b.limit;
  out["actual"] = b.actual;
  if (b.against_stable) out["against"] = "stable";
  out["message"] = b.message;
  return out;
}

json::array BreachesJson(const std::vector<Breach>& breaches) {
  json::array out;
  for (const Breach& breach : breaches) out.push_back(BreachJson(breach));
  return out;
}

json::object SkillsJson(const Named<SkillStats>& skills) {
  json::object out;
  for (const auto& [id, stats] : skills) out[id] = SkillStatsJson(stats);
  return out;
}

RunSummary RunSummary::FromJson(const json::object& json) {
  RunSummary s;
  s.run_id = TextAt(&json, "run_id");
  s.suite = TextAt(&json, "suite");
  s.started_at = TextAt(&json, "started_at");
  s.finished_at = TextAt(&json, "finished_at");
  s.duration_ms = CountAt(&json, "duration_ms");
  s.shard = OptionalText(json, "shard");
  s.git_ref = OptionalText(json, "git_ref");
  s.concurrency = CountAt(&json, "concurrency");
  if (const json::object* totals = ObjectAt(&json, "totals")) s.totals = SkillStatsFromJson(*totals);
  s.skills = NamedFromJson<SkillStats>(ObjectAt(&json, "skills"), SkillStatsFromJson);
  if (const json::array* versions = ArrayAt(&json, "versions")) {
    s.versions.emplace();
    for (const json::value& v : *versions) {
      if (const json::object* o = v.if_object()) s.versions->push_back(VersionFromJson(*o));
    }
  }
  if (const json::object* baseline = ObjectAt(&json, "baseline")) s.baseline = BaselineFromJson(*baseline);
  RunFactsFromJson(json, s);
  for (const auto& [key, value] : json) {
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end()) s.other[key] = value;
  }
  return s;
}

json::object RunSummary::ToJson() const {
  json::object out{{"run_id", run_id},
                   {"suite", suite},
                   {"started_at", started_at},
                   {"finished_at", finished_at},
                   {"duration_ms", duration_ms}};
  if (shard) out["shard"] = *shard;
  if (git_ref) out["git_ref"] = *git_ref;
  out["concurrency"] = concurrency;
  out["totals"] = SkillStatsJson(totals);
  out["skills"] = SkillsJson(skills);
  if (versions) {
    json::array pairs;
    for (const VersionComparison& v : *versions) pairs.push_back(VersionJson(v));
    out["versions"] = std::move(pairs);
  }
  if (baseline) out["baseline"] = BaselineJson(*baseline);
  RunFactsJson(*this, out);
  for (const auto& [key, value] : other) out[key] = value;
  return out;
}

}  // namespace skillrunner::eval
