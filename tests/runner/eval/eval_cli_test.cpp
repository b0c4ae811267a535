// `skillrunner eval` end to end: the real program on small suites in temp
// folders (simulated provider, no network), as a nightly job would run it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "runner/eval/history/history.h"
#include "runner/eval/records/case_outcome.h"
#include "tests/runner/eval/eval_cli_support.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using eval_test::CountLines;
using eval_test::ReadFile;
using eval_test::ReadRecords;
using eval_test::Skillrunner;

constexpr int kGenCases = 24;
constexpr int kEchoCases = 6;

class EvalCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skills/gen/skill.yaml", R"(id: gen
template_type: LLM_JSON_GENERATION
model: sim-model
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [label]
  additionalProperties: false
  properties: { label: { type: string } }
prompt: { system: Label the text., user: "{{input.text}}" }
review: { rubric: quality }
)");
    std::string gen_cases;
    for (int i = 1; i <= kGenCases; ++i) {
      gen_cases +=
          "{\"id\": \"g" + std::to_string(i) + "\", \"input\": {\"text\": \"text " + std::to_string(i) + "\"}}\n";
    }
    tree_.Write("skills/gen/cases.jsonl", gen_cases);
    tree_.Write("skills/echo/skill.yaml",
                "id: echo\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    std::string echo_cases;
    for (int i = 1; i <= kEchoCases; ++i) {
      int expected = i == kEchoCases ? 99 : i;  // the last case's expectation is wrong
      echo_cases += "{\"id\": \"e" + std::to_string(i) + "\", \"input\": {\"n\": " + std::to_string(i) +
                    "}, \"expected\": {\"n\": " + std::to_string(expected) + "}}\n";
    }
    tree_.Write("skills/echo/cases.jsonl", echo_cases);
    tree_.Write("rubrics/quality.yaml",
                "id: quality\ncriteria:\n  - { id: a, description: first, required: true }\n"
                "  - { id: b, description: second }\n");
    tree_.Write("good.yaml", "providers: { sim: { kind: simulated } }\nmodels: { sim-model: { provider: sim } }\n");
    // The judge of gen's review gate (its attempt 2) fails criterion a.
    tree_.Write("bad.yaml",
                "providers:\n  sim:\n    kind: simulated\n    faults:\n"
                "      - { skill: gen.review, attempt: 2, fault: verdict, criterion: a, verdict: fail }\n"
                "models: { sim-model: { provider: sim } }\n");
    tree_.Write("slow.yaml",
                "providers: { sim: { kind: simulated, latency_ms: 100 } }\nmodels: { sim-model: { provider: sim } }\n");
    tree_.Write("suite.yaml", R"(id: night
skills:
  - skill: gen
  - skill: echo
    expected: subset
thresholds: { schema_compliance: 0.9, rubric_pass_rate: 0.9, max_regression: 0.05 }
)");
  }

  eval_test::Ran Eval(const std::string& config, const std::string& args) {
    return Skillrunner(tree_.root(), "--skills skills --rubrics rubrics --config " + config + " eval " + args);
  }

  json::object Summary(const std::string& out) {
    return json::parse(ReadFile(tree_.Path(out + "/summary.json"))).as_object();
  }

  // case key -> outcome name and output, for comparing runs case by case.
  std::map<std::string, std::string> Outcomes(const std::string& out) {
    std::map<std::string, std::string> outcomes;
    for (const auto& record : ReadRecords(tree_.Path(out + "/results.jsonl"))) {
      std::string output = record.contains("result") ? json::serialize(record.at("result").at("output")) : "-";
      auto [it, inserted] =
          outcomes.emplace(CaseKey(record), std::string(CaseOutcomeName(OutcomeOf(record))) + " " + output);
      EXPECT_TRUE(inserted) << "recorded twice: " << it->first;
    }
    return outcomes;
  }

  testing::TempTree tree_;
};

TEST_F(EvalCliTest, ARunRecordsEveryCaseAndWritesTheReports) {
  auto ran = Eval("good.yaml", "suite.yaml --out out/run1 --concurrency 4");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(CountLines(tree_.Path("out/run1/results.jsonl")), static_cast<std::size_t>(kGenCases + kEchoCases));
  json::object summary = Summary("out/run1");
  EXPECT_EQ(summary.at("suite"), "night");
  EXPECT_EQ(summary.at("status"), "pass");
  EXPECT_EQ(summary.at("concurrency"), 4);
  EXPECT_EQ(summary.at("breaches").as_array().size(), 0u);
  const json::object& gen = summary.at("skills").at("gen").as_object();
  EXPECT_EQ(gen.at("cases"), kGenCases);
  EXPECT_EQ(gen.at("schema_compliance"), 1.0);
  EXPECT_EQ(gen.at("judged"), kGenCases);  // the gate's verdicts, reused
  EXPECT_EQ(gen.at("rubric_pass_rate"), 1.0);
  EXPECT_EQ(gen.at("criteria").at("a").at("pass_rate"), 1.0);
  const json::object& echo = summary.at("skills").at("echo").as_object();
  EXPECT_EQ(echo.at("expected_match"), 5.0 / 6.0);
  EXPECT_EQ(echo.at("rubric_pass_rate"), nullptr);  // not judged
  // The mismatch is a failed case that names the pointer.
  // results.jsonl is in completion order.
  auto records = ReadRecords(tree_.Path("out/run1/results.jsonl"));
  auto e6_at = std::find_if(records.begin(), records.end(), [](const json::object& r) { return r.at("case") == "e6"; });
  ASSERT_NE(e6_at, records.end());
  const json::object& e6 = *e6_at;
  EXPECT_EQ(json::serialize(e6.at("expected_mismatches")), R"([{"path":"/n","message":"expected 99, found 6"}])");
  EXPECT_EQ(OutcomeOf(e6), CaseOutcome::kFail);
  for (const auto& r : records) EXPECT_EQ(r.contains("rubric"), r.at("skill") == "gen");
  EXPECT_TRUE(fs::exists(tree_.Path("out/run1/junit.xml")));
  EXPECT_TRUE(fs::exists(tree_.Path("out/run1/report.html")));
  EXPECT_TRUE(fs::exists(tree_.Path("out/eval-history.sqlite")));  // DIR/../eval-history.sqlite
  EXPECT_NE(ran.err.find("reports in " + tree_.Path("out/run1").string()), std::string::npos) << ran.err;
  // A second run into the same folder is refused rather than mixed in.
  auto again = Eval("good.yaml", "suite.yaml --out out/run1");
  EXPECT_EQ(again.status, 2);
  EXPECT_EQ(again.err,
            "skillrunner eval: out/run1 already holds a run (results.jsonl); continue it with --resume or "
            "choose another --out\n");
}

// A dataset is checked in one pass before any request: lines that do not parse, duplicate ids,
// each input against the input schema and each expected value against the output schema (under
// `expected: subset`, the members it gives: none is required, and an array may list fewer
// elements than the answer's), every problem at file:line with a JSON pointer.
TEST_F(EvalCliTest, ADatasetIsCheckedInOnePassAgainstBothSchemasBeforeAnyRequest) {
  tree_.Write("skills/invoice/skill.yaml", R"(id: invoice
handler: echo
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [total, currency]
  properties:
    total: { type: number }
    currency: { enum: [EUR, USD] }
    lines: { type: array, minItems: 2, items: { type: object, required: [amount], properties: { amount: { type: number } } } }
)");
  tree_.Write(
      "skills/invoice/cases.jsonl",
      "{\"id\": \"i1\", \"input\": {\"text\": \"a\"}, \"expected\": {\"total\": 664.88, \"currency\": \"EUR\"}}\n"
      "{\"id\": \"i2\", \"input\": {\"text\": \"b\"}, \"expected\": {\"currency\": \"EURO\"}}\n"
      "{\"id\": \"i3\", \"input\": {\"text\": \"c\"}, \"expected\": {\"total\": \"1\"}}\n"
      "{\"id\": \"i1\", \"input\": {\"text\": \"d\"}}\n"
      "{\"id\": \"i5\", \"input\": {\"txt\": \"e\"}, \"expected\": {\"lines\": [{\"amount\": 1}]}}\n"
      "{\"id\": \"i6\", \"input\": \n"
      "{\"id\": \"i7\", \"input\": {\"text\": \"g\"}, \"expected\": {\"lines\": [{\"amount\": \"1\"}]}}\n");
  tree_.Write("invoices.yaml", "id: invoices\nskills:\n  - { skill: invoice, expected: subset }\n");
  auto run = Eval("good.yaml", "invoices.yaml --out out/invoices");
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.err,
            "skills/invoice/cases.jsonl:2:1: case \"i2\": /expected/currency: expected one of [\"EUR\",\"USD\"], "
            "found \"EURO\"\n"
            "skills/invoice/cases.jsonl:3:1: case \"i3\": /expected/total: expected number, found string \"1\"\n"
            "skills/invoice/cases.jsonl:4:1: duplicate case id \"i1\" (first used on line 1)\n"
            "skills/invoice/cases.jsonl:5:1: case \"i5\": /input/text: required property is missing\n"
            "skills/invoice/cases.jsonl:6:1: not valid JSON: incomplete JSON\n"
            "skills/invoice/cases.jsonl:7:1: case \"i7\": /expected/lines/0/amount: expected number, found string "
            "\"1\"\n");
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("out/invoices/results.jsonl")));

  // design.md §12.3: validate finds the same, at the same lines, in eval's words: every skill's
  // cases.jsonl always (its lines and inputs), and with --suite the `expected` checks of that
  // suite's mode too.
  const std::string validate = "--skills skills --rubrics rubrics --config good.yaml validate --against none";
  auto alone = Skillrunner(tree_.root(), validate);
  EXPECT_EQ(alone.status, 2) << alone.out;
  EXPECT_NE(alone.out.find("skills/invoice/cases.jsonl:4:1: duplicate case id \"i1\" (first used on line 1)\n"
                           "skills/invoice/cases.jsonl:5:1: case \"i5\": /input/text: required property is missing\n"
                           "skills/invoice/cases.jsonl:6:1: not valid JSON: incomplete JSON\n"),
            std::string::npos)
      << alone.out;
  EXPECT_EQ(alone.out.find("/expected/"), std::string::npos) << alone.out;
  auto suite = Skillrunner(tree_.root(), validate + " --suite invoices.yaml");
  EXPECT_EQ(suite.status, 2);
  EXPECT_NE(suite.out.find(run.err), std::string::npos) << suite.out;
}

TEST_F(EvalCliTest, ShardsMergedEqualTheUnshardedRunCaseForCase) {
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/full").status, 0);
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/s0 --shard 0/2 --concurrency 3").status, 0);
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/s1 --shard 1/2 --concurrency 7").status, 0);
  auto s0 = Outcomes("out/s0");
  auto s1 = Outcomes("out/s1");
  EXPECT_FALSE(s0.empty());
  EXPECT_FALSE(s1.empty());
  for (const auto& [key, unused] : s0) EXPECT_FALSE(s1.contains(key)) << key;
  auto merged = Skillrunner(tree_.root(),
                            "--skills skills --rubrics rubrics --config good.yaml eval merge "
                            "--out out/merged out/s0 out/s1");
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(Outcomes("out/merged"), Outcomes("out/full"));
  EXPECT_EQ(Outcomes("out/merged").size(), static_cast<std::size_t>(kGenCases + kEchoCases));
  json::object full_summary = Summary("out/full");
  json::object merged_summary = Summary("out/merged");
  for (const char* skill : {"gen", "echo"}) {
    for (const char* field : {"cases", "schema_compliance", "rubric_pass_rate", "expected_match", "judged"}) {
      EXPECT_EQ(merged_summary.at("skills").at(skill).at(field), full_summary.at("skills").at(skill).at(field))
          << skill << "." << field;
    }
  }
  EXPECT_EQ(Summary("out/s0").at("shard"), "0/2");
  // Merging a shard with itself would count its cases twice: refused.
  auto twice = Skillrunner(tree_.root(),
                           "--skills skills --rubrics rubrics --config good.yaml eval merge "
                           "--out out/twice out/s0 out/s0");
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(twice.err.find(" is in both out/s0 and out/s0 (overlapping shards, or the same shard twice)"),
            std::string::npos)
      << twice.err;
}

TEST_F(EvalCliTest, KillNineMidRunThenResumeRecordsEveryCaseExactlyOnce) {
  pid_t pid = eval_test::Spawn(tree_.root(), {"--skills", "skills", "--rubrics", "rubrics", "--config", "slow.yaml",
                                              "eval", "suite.yaml", "--out", "out/killed", "--concurrency", "2"});
  ASSERT_GT(pid, 0);
  fs::path results = tree_.Path("out/killed/results.jsonl");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (CountLines(results) < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::size_t before = CountLines(results);
  ASSERT_GE(before, 4u);
  ASSERT_LT(before, static_cast<std::size_t>(kGenCases + kEchoCases)) << "the run finished before the kill";
  // What a write cut short by the kill leaves behind.
  std::ofstream(results, std::ios::app) << R"({"skill":"gen","case":"g9","res)";
  std::string run_id(json::parse(ReadFile(tree_.Path("out/killed/run.json"))).at("run_id").as_string());

  auto resumed = Eval("good.yaml", "suite.yaml --out out/killed --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("dropped a torn last line ("), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("already recorded"), std::string::npos) << resumed.err;
  auto outcomes = Outcomes("out/killed");  // fails on any key recorded twice
  EXPECT_EQ(outcomes.size(), static_cast<std::size_t>(kGenCases + kEchoCases));
  EXPECT_EQ(CountLines(results), static_cast<std::size_t>(kGenCases + kEchoCases));
  EXPECT_EQ(Summary("out/killed").at("run_id").as_string(), run_id);
  EXPECT_EQ(Summary("out/killed").at("skills").at("gen").at("cases"), kGenCases);
}

TEST_F(EvalCliTest, AWorsenedRunBreachesThresholdsAndListsTheFlippedCases) {
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/night1 --history hist.sqlite").status, 0);
  auto worse = Eval("bad.yaml", "suite.yaml --out out/night2 --history hist.sqlite --baseline last");
  EXPECT_EQ(worse.status, 1) << worse.err;
  json::object summary = Summary("out/night2");
  EXPECT_EQ(summary.at("status"), "breached");
  std::vector<std::string> messages;
  for (const auto& b : summary.at("breaches").as_array()) messages.emplace_back(b.at("message").as_string());
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "gen: rubric pass rate 0.000 is below the minimum 0.900",
                          "gen: case pass rate fell by 1.000 against the baseline, more than the allowed 0.050 (24 "
                          "pass->fail, 0 fail->pass of 24 paired cases; McNemar p = 1.19e-07 < 0.05)",
                          "gen: rubric pass rate fell by 1.000 against the baseline, more than the allowed 0.050 (24 "
                          "pass->fail, 0 fail->pass of 24 paired cases; McNemar p = 1.19e-07 < 0.05)",
                          "gen: criterion \"a\" pass rate fell by 1.000 against the baseline, more than the allowed "
                          "0.050 (24 pass->fail, 0 fail->pass of 24 paired cases; McNemar p = 1.19e-07 < 0.05)",
                      }));
  const json::object& baseline = summary.at("baseline").as_object();
  EXPECT_EQ(baseline.at("run_id"), Summary("out/night1").at("run_id"));
  const json::array& flipped = baseline.at("flipped").as_array();
  ASSERT_EQ(flipped.size(), static_cast<std::size_t>(kGenCases));
  EXPECT_EQ(json::serialize(flipped[0]), R"({"skill":"gen","case":"g1","from":"pass","to":"fail"})");
  EXPECT_NE(worse.err.find("breach: gen: rubric pass rate 0.000 is below the minimum 0.900\n"), std::string::npos);
  EXPECT_NE(worse.err.find("24 case(s) flipped from pass since run "), std::string::npos) << worse.err;
}

// design.md §9.5: an old threshold breach is not a regression. An unchanged
// rerun with --fail-on regressions exits 0 (the breach is still reported); a
// rerun with faults shows what changed: first try, tokens, latency, and the
// cases that flipped per gate.
TEST_F(EvalCliTest, BaselinesSayWhatChangedAndFailOnRegressionsIgnoresOldBreaches) {
  // echo's last case expects the wrong value: expected_match 1.0 breaches in every run.
  tree_.Write("strict.yaml",
              "id: night\nskills:\n  - skill: gen\n  - skill: echo\n    expected: subset\n"
              "thresholds: { expected_match: 1.0, max_regression: 0.05 }\n");
  tree_.Write("steady.yaml",
              "providers: { sim: { kind: simulated, latency_ms: 5 } }\n"
              "models: { sim-model: { provider: sim } }\n");
  // Every first answer has the wrong type (a validation retry), answers are
  // slower, and the gate's judge (now attempt 3) fails criterion a.
  tree_.Write("faulty.yaml",
              "providers:\n  sim:\n    kind: simulated\n    latency_ms: 40\n    faults:\n"
              "      - { skill: gen, attempt: 1, fault: wrong_type, path: /label }\n"
              "      - { skill: gen.review, attempt: 3, fault: verdict, criterion: a, verdict: fail }\n"
              "models: { sim-model: { provider: sim } }\n");
  ASSERT_EQ(Eval("steady.yaml", "strict.yaml --out out/n1 --history h.sqlite").status, 1);
  auto unchanged =
      Eval("steady.yaml", "strict.yaml --out out/n2 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(unchanged.status, 0) << unchanged.err;

  json::object summary = Summary("out/n2");
  EXPECT_EQ(summary.at("fail_on"), "regressions");
  ASSERT_EQ(summary.at("breaches").as_array().size(), 1u);
  EXPECT_EQ(summary.at("breaches").at(0).at("kind"), "threshold");
  EXPECT_NE(unchanged.err.find("breach (reported; --fail-on regressions): echo: expected-match rate 0.833 is below the "
                               "minimum 1.000"),
            std::string::npos)
      << unchanged.err;
  EXPECT_EQ(Eval("steady.yaml", "strict.yaml --out out/n3 --history h.sqlite --baseline last").status, 1);

  auto faulty =
      Eval("faulty.yaml", "strict.yaml --out out/n4 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(faulty.status, 1) << faulty.err;
  summary = Summary("out/n4");
  const json::object& gen = summary.at("baseline").at("skills").at("gen").as_object();
  EXPECT_EQ(gen.at("first_try_rate_delta"), -1.0);
  EXPECT_EQ(gen.at("retry_rate_delta"), 1.0);
  EXPECT_GT(gen.at("input_tokens_delta").to_number<double>(), 0);
  EXPECT_GE(gen.at("latency_p50_ms_delta").to_number<double>(), 35);
  const json::object& flips = summary.at("baseline").at("flips").as_object();
  EXPECT_EQ(flips.at("rubric").at("pass_to_fail").as_array().size(), static_cast<std::size_t>(kGenCases));
  EXPECT_EQ(json::serialize(flips.at("rubric").at("pass_to_fail").at(0)), R"({"skill":"gen","case":"g1"})");
  EXPECT_EQ(flips.at("schema"), json::parse(R"({"pass_to_fail":[],"fail_to_pass":[]})"));
  EXPECT_EQ(flips.at("expected"), json::parse(R"({"pass_to_fail":[],"fail_to_pass":[]})"));
  std::vector<std::string> kinds;
  for (const auto& b : summary.at("breaches").as_array()) kinds.emplace_back(b.at("kind").as_string());
  EXPECT_EQ(kinds, (std::vector<std::string>{"regression", "regression", "regression", "threshold"}));
  std::vector<std::string> measures;
  for (const auto& b : summary.at("breaches").as_array()) measures.emplace_back(b.at("measure").as_string());
  EXPECT_EQ(measures,
            (std::vector<std::string>{"case_pass_rate", "rubric_pass_rate", "criterion:a", "expected_match"}));
  const std::string report = ReadFile(tree_.Path("out/n4/report.html"));
  EXPECT_NE(report.find("<td class=\"down\">-100.0 pp</td>"), std::string::npos);  // first try
  EXPECT_NE(report.find("rubric: " + std::to_string(kGenCases) + " pass → fail (gen/g1, gen/g2"), std::string::npos);
}

TEST_F(EvalCliTest, AJudgeThatGivesNoVerdictIsAJudgeErrorNeverAPassOrFail) {
  tree_.Write("judged.yaml", R"(id: judged
skills:
  - skill: echo
    rubric: quality
    judge_model: sim-model
thresholds: { rubric_pass_rate: 0.5 }
)");
  // Every judge answer is broken, the retry too.
  tree_.Write("broken_judge.yaml",
              "providers:\n  sim:\n    kind: simulated\n    faults:\n"
              "      - { skill: echo.eval, attempt: [1, 2], fault: invalid_json }\n"
              "models: { sim-model: { provider: sim } }\n");
  auto ran = Eval("broken_judge.yaml", "judged.yaml --out out/j");
  EXPECT_EQ(ran.status, 1) << ran.err;
  json::object echo = Summary("out/j").at("skills").at("echo").as_object();
  EXPECT_EQ(echo.at("judge_errors"), kEchoCases);
  EXPECT_EQ(echo.at("judged"), 0);
  EXPECT_EQ(echo.at("rubric_pass_rate"), nullptr);
  EXPECT_EQ(Summary("out/j").at("breaches").at(0).at("message"),
            "echo: rubric pass rate could not be measured: no case was judged (6 judge error(s))");
  auto records = ReadRecords(tree_.Path("out/j/results.jsonl"));
  EXPECT_EQ(records[0].at("judge_error").at("code"), "JUDGE_ERROR");
  EXPECT_EQ(OutcomeOf(records[0]), CaseOutcome::kJudgeError);
}

TEST_F(EvalCliTest, AReviewGateThatCannotJudgeIsAJudgeErrorNotAnInvocationError) {
  // gen's own review gate (attempts 2 and 3 of each invocation) answers
  // invalid JSON twice: SkillRunner::Invoke fails with JUDGE_ERROR.
  tree_.Write("gate_broken.yaml",
              "providers:\n  sim:\n    kind: simulated\n    faults:\n"
              "      - { skill: gen.review, attempt: [2, 3], fault: invalid_json }\n"
              "models: { sim-model: { provider: sim } }\n");
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/n1 --history hist.sqlite").status, 0);
  auto ran = Eval("gate_broken.yaml", "suite.yaml --out out/n2 --history hist.sqlite --baseline last");
  EXPECT_EQ(ran.status, 1) << ran.err;
  json::object summary = Summary("out/n2");
  const json::object& gen = summary.at("skills").at("gen").as_object();
  EXPECT_EQ(gen.at("judge_errors"), kGenCases);
  EXPECT_EQ(gen.at("judged"), 0);
  EXPECT_EQ(gen.at("schema_compliance"), nullptr);  // no case said anything about the schema
  EXPECT_EQ(json::serialize(gen.at("errors")), "{}");
  std::vector<std::string> messages;
  for (const auto& b : summary.at("breaches").as_array()) messages.emplace_back(b.at("message").as_string());
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "gen: rubric pass rate could not be measured: no case was judged (24 judge error(s))",
                          "gen: judge error rate 1.000 is above the maximum 0.000 (24 judge error(s) in 24 case(s) "
                          "sent to the judge)",
                      }));
  EXPECT_EQ(summary.at("baseline").at("flipped").as_array().size(), 0u);  // never a flip
  EXPECT_NE(ran.err.find("skillrunner eval: 0 case(s) flipped from pass since run "), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("30/30 cases, cases passed 83.3%, 1 failed, 0 errors, 24 judge errors,"), std::string::npos)
      << ran.err;
  // The report's figure is the progress line's (design.md §9.5): 5 of the 6 cases a judge decided.
  EXPECT_DOUBLE_EQ(summary.at("totals").at("case_pass_rate").as_double(), 5.0 / 6);
  EXPECT_NE(ReadFile(tree_.Path("out/n2/report.html")).find("<dt>Cases passed</dt><dd>83.3%</dd>"), std::string::npos);
  std::string junit = ReadFile(tree_.Path("out/n2/junit.xml"));
  EXPECT_NE(junit.find(R"(<testsuite name="gen" tests="24" failures="0" errors="24")"), std::string::npos) << junit;
  std::size_t typed = 0;
  for (std::size_t at = junit.find(R"(type="JUDGE_ERROR")"); at != std::string::npos;
       at = junit.find(R"(type="JUDGE_ERROR")", at + 1)) {
    ++typed;
  }
  EXPECT_EQ(typed, static_cast<std::size_t>(kGenCases));
}

TEST_F(EvalCliTest, MergeRefusesAMissingShardAndAnIncompleteOne) {
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/s0 --shard 0/2").status, 0);
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/s1 --shard 1/2").status, 0);
  std::string merge = "--skills skills --rubrics rubrics --config good.yaml eval merge ";
  auto only_one = Skillrunner(tree_.root(), merge + "--out out/m0 out/s0");
  EXPECT_EQ(only_one.status, 2);
  EXPECT_EQ(only_one.err, "skillrunner eval merge: shard(s) 1/2 missing: merge needs every shard of the split\n");
  EXPECT_FALSE(fs::exists(tree_.Path("out/m0/summary.json")));

  // Shard 1 stopped early: its last two records are gone, a torn line is left.
  fs::path results = tree_.Path("out/s1/results.jsonl");
  auto records = ReadRecords(results);
  ASSERT_GE(records.size(), 3u);
  std::string kept;
  for (std::size_t i = 0; i + 2 < records.size(); ++i) kept += json::serialize(records[i]) + "\n";
  tree_.Write("out/s1/results.jsonl", kept + R"({"skill":"gen","ca)");
  auto incomplete = Skillrunner(tree_.root(), merge + "--out out/m1 out/s0 out/s1");
  EXPECT_EQ(incomplete.status, 2);
  EXPECT_NE(incomplete.err.find("skillrunner eval merge: out/s1/results.jsonl ends with a torn line (18 bytes, left "
                                "out)\n"),
            std::string::npos)
      << incomplete.err;
  EXPECT_NE(incomplete.err.find("skillrunner eval merge: 2 of the suite's 30 planned case(s) are in no shard: "),
            std::string::npos)
      << incomplete.err;
  for (std::size_t i = records.size() - 2; i < records.size(); ++i) {
    EXPECT_NE(incomplete.err.find(CaseKey(records[i])), std::string::npos) << CaseKey(records[i]);
  }
  EXPECT_NE(incomplete.err.find("; finish the incomplete shard(s) with --resume, then merge again\n"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(tree_.Path("out/m1/summary.json")));
}

TEST_F(EvalCliTest, ShardRunsAreNeverTheBaselineNorRecordedInTheHistory) {
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/n1 --history hist.sqlite").status, 0);
  std::string night1(Summary("out/n1").at("run_id").as_string());
  for (int i = 0; i < 2; ++i) {
    std::string shard = std::to_string(i) + "/2";
    auto ran = Eval("good.yaml", "suite.yaml --out out/s" + std::to_string(i) + " --shard " + shard +
                                     " --history hist.sqlite --baseline last");
    ASSERT_EQ(ran.status, 0) << ran.err;
    EXPECT_EQ(Summary("out/s" + std::to_string(i)).at("baseline").at("run_id").as_string(), night1);
    EXPECT_NE(ran.err.find("shard runs are not recorded in the history"), std::string::npos) << ran.err;
  }
  auto merged = Skillrunner(tree_.root(),
                            "--skills skills --rubrics rubrics --config good.yaml eval merge "
                            "--out out/n2 out/s0 out/s1 --history hist.sqlite --baseline last");
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(Summary("out/n2").at("baseline").at("run_id").as_string(), night1);  // not tonight's shard 1
  std::string night2(Summary("out/n2").at("run_id").as_string());

  // Shards sharing a run id: none of them replaces another's rows, and the
  // merged run under that id has every case.
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/t" + std::to_string(i) + " --shard " + std::to_string(i) +
                                    "/2 --run-id n3 --history hist.sqlite")
                  .status,
              0);
  }
  auto history = History::Open(tree_.Path("hist.sqlite"));
  ASSERT_TRUE(history) << history.error().message;
  EXPECT_FALSE((*history)->LoadBaseline("night", "n3", "x"));  // not recorded
  ASSERT_EQ(Skillrunner(tree_.root(),
                        "--skills skills --rubrics rubrics --config good.yaml eval merge "
                        "--out out/n3 out/t0 out/t1 --history hist.sqlite")
                .status,
            0);
  auto n3 = (*history)->LoadBaseline("night", "n3", "x");
  ASSERT_TRUE(n3 && *n3);
  EXPECT_EQ((*n3)->outcomes.size(), static_cast<std::size_t>(kGenCases + kEchoCases));
  auto trend = (*history)->Trend("night", 10);
  ASSERT_TRUE(trend) << trend.error().message;
  std::vector<std::string> ids;
  for (const auto& point : *trend) ids.push_back(point.run_id);
  EXPECT_EQ(ids, (std::vector<std::string>{night1, night2, "n3"}));
}

TEST_F(EvalCliTest, ASecondProcessOnTheSameFolderIsRefused) {
  pid_t pid = eval_test::Spawn(tree_.root(), {"--skills", "skills", "--rubrics", "rubrics", "--config", "slow.yaml",
                                              "eval", "suite.yaml", "--out", "out/busy", "--concurrency", "1"});
  ASSERT_GT(pid, 0);
  fs::path results = tree_.Path("out/busy/results.jsonl");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (CountLines(results) < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto second = Eval("good.yaml", "suite.yaml --out out/busy --resume");
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the first run finished before the second started";
  EXPECT_EQ(second.status, 2);
  EXPECT_EQ(second.err, "skillrunner eval: another eval is writing out/busy (it holds out/busy/.lock)\n");
  // Once the first is gone, the folder can be resumed.
  auto resumed = Eval("good.yaml", "suite.yaml --out out/busy --resume");
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(Outcomes("out/busy").size(), static_cast<std::size_t>(kGenCases + kEchoCases));
}

TEST_F(EvalCliTest, ResumeRefusesAChangedPlanAndCountsADuplicatedCaseOnce) {
  ASSERT_EQ(Eval("good.yaml", "suite.yaml --out out/p").status, 0);
  // A duplicated record (e.g. two processes wrote the folder): counted once.
  fs::path results = tree_.Path("out/p/results.jsonl");
  std::string text = ReadFile(results);
  tree_.Write("out/p/results.jsonl", text + text.substr(0, text.find('\n') + 1));
  auto again = Eval("good.yaml", "suite.yaml --out out/p --resume");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("skillrunner eval: 1 record(s) repeated a case already recorded; each case counts once "
                           "(its last record)\n"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(Summary("out/p").at("skills").at("gen").at("cases"), kGenCases);
  EXPECT_EQ(Summary("out/p").at("totals").at("cases"), kGenCases + kEchoCases);
  // The dataset changed since the run began: resuming would mix two plans.
  std::string cases = ReadFile(tree_.Path("skills/echo/cases.jsonl"));
  tree_.Write("skills/echo/cases.jsonl", cases + "{\"id\": \"e7\", \"input\": {\"n\": 7}}\n");
  auto changed = Eval("good.yaml", "suite.yaml --out out/p --resume");
  EXPECT_EQ(changed.status, 2);
  EXPECT_EQ(changed.err.rfind("skillrunner eval: --resume: the suite's cases changed since the run in out/p began "
                              "(cases, repeats or datasets differ: plan ",
                              0),
            0u)
      << changed.err;
  EXPECT_NE(changed.err.find("); resuming would mix two plans in one run: start a new run with another --out\n"),
            std::string::npos);
}

TEST_F(EvalCliTest, RejudgingFlagsCriteriaWhoseVerdictsDisagree) {
  // The extra judgings (judge id "gen.eval") fail criterion b, which the
  // review gate's own verdict passed: b's verdicts never agree.
  tree_.Write("flaky.yaml",
              "providers:\n  sim:\n    kind: simulated\n    faults:\n"
              "      - { skill: gen.eval, attempt: 1, fault: verdict, criterion: b, verdict: fail }\n"
              "models: { sim-model: { provider: sim } }\n");
  auto ran = Eval("flaky.yaml", "suite.yaml --out out/r --rejudge 2 --rejudge-sample 5");
  ASSERT_EQ(ran.status, 0) << ran.err;
  int rejudged = 0;
  for (const auto& record : ReadRecords(tree_.Path("out/r/results.jsonl"))) {
    if (!record.contains("rejudges")) continue;
    ++rejudged;
    ASSERT_EQ(record.at("rejudges").as_array().size(), 2u);
    EXPECT_EQ(record.at("rejudges").at(0).at("pass"), true);  // b is not required
  }
  EXPECT_EQ(rejudged, 5);  // only gen is judged; echo has no rubric
  json::object summary = Summary("out/r");
  const json::object& criteria = summary.at("skills").at("gen").at("criteria").as_object();
  EXPECT_EQ(criteria.at("a").at("agreement"), 1.0);
  EXPECT_EQ(criteria.at("a").at("unstable"), false);
  EXPECT_EQ(criteria.at("b").at("agreement"), 0.0);
  EXPECT_EQ(criteria.at("b").at("unstable"), true);
  EXPECT_EQ(criteria.at("b").at("pass_rate"), 1.0);  // the pass rate is the first verdict's
}

TEST_F(EvalCliTest, RunErrorsExitTwoWithTheProblem) {
  tree_.Write("typo.yaml", "id: night\nskills:\n  - skill: gen_\n");
  auto bad_suite = Eval("good.yaml", "typo.yaml --out out/x");
  EXPECT_EQ(bad_suite.status, 2);
  EXPECT_EQ(bad_suite.err, "typo.yaml:3:12: /skills/0/skill: unknown skill \"gen_\" (did you mean \"gen\"?)\n");
  tree_.Write("blocker", "a file where the output folder should go");
  auto unwritable = Eval("good.yaml", "suite.yaml --out blocker/out");
  EXPECT_EQ(unwritable.status, 2);
  EXPECT_EQ(unwritable.err.rfind("skillrunner eval: cannot create blocker/out: ", 0), 0u) << unwritable.err;
  auto bad_shard = Eval("good.yaml", "suite.yaml --out out/y --shard 2/2");
  EXPECT_EQ(bad_shard.status, 2);
  EXPECT_EQ(bad_shard.err, "skillrunner eval: --shard 2/2: need 0 <= I < N\n");
}

TEST_F(EvalCliTest, TheShippedNightlySuiteRunsOfflineWithReportsAndHistory) {
  std::string src = SKILLRUNNER_SOURCE_DIR;
  auto ran = Skillrunner(tree_.root(), "--skills " + src + "/skills --rubrics " + src + "/rubrics --config " + src +
                                           "/skillrunner.yaml --provider simulated eval " + src +
                                           "/evals/nightly.yaml --out nightly/out");
  ASSERT_EQ(ran.status, 0) << ran.err;
  json::object summary = Summary("nightly/out");
  EXPECT_EQ(summary.at("suite"), "nightly");
  const json::object& skills = summary.at("skills").as_object();
  ASSERT_EQ(skills.size(), 3u);
  std::string failures;  // what went wrong, when something did
  for (const auto& record : ReadRecords(tree_.Path("nightly/out/results.jsonl"))) {
    if (record.contains("error")) failures += json::serialize(record.at("error").at("message")) + "\n";
  }
  for (const auto& [id, stats] : skills) {
    EXPECT_GE(stats.at("cases").as_int64(), 50) << id;
    EXPECT_EQ(stats.at("schema_compliance"), 1.0) << id << "\n" << failures;
  }
  EXPECT_EQ(skills.at("word_stats").at("expected_match"), 1.0);
  EXPECT_GT(skills.at("triage_ticket").at("judge_input_tokens").as_int64(), 0);  // judged by the eval
  EXPECT_GT(skills.at("extract_contact").at("retry_rate").as_double(), 0);       // the scripted gate failure
  // JUnit as a JUnit reader sees it: 150 cases in three suites of 50.
  std::string junit = testing::RunPython(tree_, testing::kJunitDescribeScript, tree_.Path("nightly/out/junit.xml"));
  EXPECT_EQ(junit.rfind("testsuites nightly 150 0 0\n", 0), 0u) << junit.substr(0, 300);
  for (const char* id : {"extract_contact", "triage_ticket", "word_stats"}) {
    EXPECT_NE(junit.find(std::string(" suite ") + id + " 50 0 0 50"), std::string::npos) << id;
  }
  // The report, through a real HTML parser: well-formed and self-contained.
  std::string html = testing::RunPython(tree_, testing::kHtmlCheckScript, tree_.Path("nightly/out/report.html"));
  EXPECT_EQ(html.rfind(testing::kHtmlClean, 0), 0u) << html.substr(0, 300);
  auto history = History::Open(tree_.Path("nightly/eval-history.sqlite"));
  ASSERT_TRUE(history) << history.error().message;
  auto trend = (*history)->Trend("nightly", 10);
  ASSERT_TRUE(trend) << trend.error().message;
  ASSERT_EQ(trend->size(), 1u);
  EXPECT_EQ(trend->at(0).run_id, summary.at("run_id").as_string());
}

}  // namespace
}  // namespace skillrunner::eval
