// design.md §12.3: the run summary as a type: one parse (RunSummary::FromJson) and one serialize
// (ToJson), round-tripped member for member and held against schemas/eval/summary.schema.json; older
// summaries (the history keeps every night's) parse with what they lack absent.
#include "runner/eval/records/run_summary.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/docs/protocol_schemas.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;

constexpr std::string_view kSchema = "eval/summary.schema.json";

// A skill's figures with every member a stats object can have.
const std::string kStats = R"J({"cases":5,"schema_compliance":0.75,"schema_checked":4,"case_pass_rate":0.5,
  "first_try_rate":0.6,"retry_rate":0.2,"transient_retries":1,"truncations":1,"refusals":1,"refused":1,
  "refusal_rate":0.2,"errors":{"MAX_RETRIES_EXCEEDED":1,"JUDGE_ERROR":1},"judged":3,"judge_errors":1,
  "judge_error_rate":0.25,"decided":2,"rubric_pass_rate":0.5,"case_criteria":{"decided":2,"passed":1,"pass_rate":0.5},
  "indeterminate":1,"indeterminate_rate":0.3333333333333333,"expected_match":null,"check_pass_rate":0.8,
  "input_tokens":1200,"cached_input_tokens":100,"output_tokens":300,"judge_input_tokens":400,"judge_output_tokens":50,
  "cost_usd":0.0125,"judge_cost_usd":0.002,"batch_cost_usd":0.006,"online_cost_usd":0.0125,
  "latency_ms":{"p50":120,"p95":900,"p99":950},"attempts_histogram":{"1":3,"2":2})J";

const std::string kCriteria = R"J("criteria":{"faithful":{"judged":3,"passed":2,"failed":1,"indeterminate":0,
  "pass_rate":0.6666666666666666,"indeterminate_rate":0.0,"counted":true,"agreement":0.5,"unstable":true,
  "calibration":{"labelled":3,"agreement":0.666667,"kappa":null,"confusion":{"judge_pass_human_pass":2,
  "judge_pass_human_fail":1,"judge_fail_human_pass":0,"judge_fail_human_fail":0}},"uncalibrated":true},
  "tone":{"judged":3,"passed":0,"failed":0,"indeterminate":3,"pass_rate":null,"indeterminate_rate":1.0,
  "counted":false}})J";

const std::string kPaired = R"J({"cases":5,"baseline_rate":1.0,"baseline_interval":[0.565508,1.0],"rate":0.4,
  "interval":[0.117621,0.769276],"pass_to_fail":3,"fail_to_pass":0,"p_value":0.25,"significant":false,
  "underpowered":true})J";

const std::string kComparison = R"J("schema_compliance_delta":-0.25,"rubric_pass_rate_delta":-0.5,
  "first_try_rate_delta":null,"retry_rate_delta":0.2,"expected_match_delta":null,"input_tokens_delta":100.0,
  "output_tokens_delta":-20.0,"cost_usd_delta":0.001,"latency_p50_ms_delta":-3.0,"latency_p95_ms_delta":40.0,
  "criteria":{"faithful":{"pass_rate_delta":-0.333333333,"paired":)J" +
                                kPaired + R"J(}},"rubric_pass_rate_stable_delta":null,"paired":{"schema":)J" + kPaired +
                                R"J(,"outcome":)J" + kPaired + "}";

const std::string kFlips = R"J({"schema":{"pass_to_fail":[{"skill":"extract","case":"c1"}],"fail_to_pass":[]},
  "checks":{"pass_to_fail":[],"fail_to_pass":[{"skill":"extract","case":"c2","repeat":2}]}})J";

// Every member summary.json can have: a compared baseline, a candidate against its stable version,
// breaches of both kinds, the cache and batch mode.
json::object FullSummary() {
  const std::string text =
      R"J({"run_id":"20251201T020000Z-ab12","suite":"nightly","started_at":"2025-12-01T02:00:00Z",
      "finished_at":"2025-12-01T02:01:00Z","duration_ms":60000,"shard":"1/2","git_ref":"abc123","concurrency":4,
      "totals":)J" +
      kStats + R"J(},"skills":{"extract":)J" + kStats + "," + kCriteria + R"J(},"extract@2":)J" + kStats +
      R"J(}},"versions":[{"skill":"extract","stable_version":1,"candidate_version":2,"candidate":"extract@2",
      "regression_alpha":0.05,)J" +
      kComparison + R"J(,"flipped":[{"skill":"extract@2","case":"c1","from":"pass","to":"fail"}],"flips":)J" + kFlips +
      R"J(}],"baseline":{"status":"compared","run_id":"r0","started_at":"2025-11-30T02:00:00Z",
      "regression_alpha":0.05,"skills":{"extract":{)J" +
      kComparison + R"J(}},"flipped":[{"skill":"extract","case":"c1","repeat":1,"from":"pass","to":"error"}],
      "flips":)J" +
      kFlips + R"J(},"thresholds":{"extract":{"schema_compliance":0.9,"criteria":{"faithful":0.8}}},
      "status":"breached","breaches":[{"skill":"extract","threshold":"schema_compliance","measure":"schema_compliance",
      "kind":"threshold","limit":0.9,"actual":0.75,"message":"extract: schema compliance 0.750 is below the minimum 0.900"},
      {"skill":"extract@2","criterion":"faithful","threshold":"max_regression","measure":"criterion:faithful",
      "kind":"regression","limit":0.05,"actual":null,"against":"stable","message":"extract@2: dropped"}],
      "fail_on":"regressions","cache":{"file":"/c.sqlite","mode":"replay","hits":4,"misses":1},"out":"/runs/night",
      "batches":2,"resubmitted":1,"batch_cost_usd":0.006,"online_cost_usd":0.0125})J";
  return json::parse(text).as_object();
}

TEST(RunSummaryTest, EveryMemberRoundTripsAndTheSummaryMatchesItsSchema) {
  const json::object full = FullSummary();
  ASSERT_EQ(testing::SchemaViolations(std::string(kSchema), full), "");
  const RunSummary typed = RunSummary::FromJson(full);
  const json::object out = typed.ToJson();
  EXPECT_EQ(out, full) << json::serialize(out);
  EXPECT_EQ(testing::SchemaViolations(std::string(kSchema), out), "");
  // What the gates and outputs read, read as the type.
  ASSERT_NE(typed.Skill("extract"), nullptr);
  EXPECT_EQ(typed.Skill("extract")->Measure("schema_compliance"), 0.75);
  EXPECT_EQ(typed.Skill("extract")->Measure("latency_p95_ms"), 900);
  EXPECT_EQ(typed.Skill("extract")->criteria->at(0).second.calibration->judge_pass_human_fail, 1);
  EXPECT_EQ(typed.baseline->skills.at(0).second.Delta("rubric_pass_rate_delta"), -0.5);
  EXPECT_TRUE(Find(typed.baseline->skills.at(0).second.paired, "outcome")->underpowered);
  EXPECT_EQ(typed.versions->at(0).comparison.criteria.at(0).second.paired->pass_to_fail, 3);
  EXPECT_EQ(typed.breaches.at(1).criterion, "faithful");
  EXPECT_TRUE(typed.breaches.at(1).against_stable);
  EXPECT_EQ(typed.totals.errors->at(1), (std::pair<std::string, std::int64_t>{"JUDGE_ERROR", 1}));
}

TEST(RunSummaryTest, EachBaselineStatusRoundTrips) {
  json::object summary = FullSummary();
  for (const char* baseline : {R"({"status":"none","reason":"the history DB has no earlier run of suite nightly",
                                  "history":"/runs/eval-history.sqlite"})",
                               R"({"status":"skipped","reason":"history: cannot open eval history h.sqlite"})"}) {
    summary["baseline"] = json::parse(baseline);
    const json::object out = RunSummary::FromJson(summary).ToJson();
    EXPECT_EQ(out, summary) << json::serialize(out);
    EXPECT_EQ(testing::SchemaViolations(std::string(kSchema), out), "");
  }
}

// The history holds summaries written before the summary was a type: they parse, with what they lack
// absent (never read as zero), and a member this build does not know is kept as it is.
TEST(RunSummaryTest, AnOlderSummaryParsesAndUnknownMembersAreKept) {
  const json::object old = json::parse(R"({"run_id":"r1","suite":"nightly","started_at":"2024-05-01T02:00:00Z",
    "skills":{"extract":{"cases":3,"rubric_pass_rate":0.9}},"status":"pass","breaches":[],"from_tomorrow":{"x":1}})")
                               .as_object();
  const RunSummary typed = RunSummary::FromJson(old);
  EXPECT_EQ(typed.run_id, "r1");
  EXPECT_EQ(typed.Skill("extract")->rubric_pass_rate, 0.9);
  EXPECT_EQ(typed.Skill("extract")->schema_compliance, std::nullopt);
  EXPECT_EQ(typed.Skill("extract")->cases, 3);
  EXPECT_EQ(typed.Skill("extract")->input_tokens, std::nullopt);  // absent, not 0
  EXPECT_EQ(typed.Skill("extract")->Measure("input_tokens"), std::nullopt);
  EXPECT_EQ(typed.Skill("extract")->criteria, std::nullopt);
  EXPECT_EQ(typed.baseline, std::nullopt);
  EXPECT_EQ(typed.versions, std::nullopt);
  EXPECT_EQ(typed.ToJson().at("from_tomorrow"), old.at("from_tomorrow"));
  // A member of the wrong type is read as absent, never a crash.
  const RunSummary odd = RunSummary::FromJson(
      json::parse(R"({"skills":{"a":7,"b":{"criteria":[1],"errors":{"X":"many"}}},"breaches":[3],"versions":{}})")
          .as_object());
  EXPECT_EQ(odd.skills.size(), 1u);
  EXPECT_EQ(odd.Skill("b")->criteria, std::nullopt);
  EXPECT_TRUE(odd.Skill("b")->errors->empty());
  EXPECT_TRUE(odd.breaches.empty());
  EXPECT_EQ(odd.versions, std::nullopt);
}

}  // namespace
}  // namespace skillrunner::eval
