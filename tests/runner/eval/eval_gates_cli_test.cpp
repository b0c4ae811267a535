// design.md §10.1: gates a CI can trust, end to end with the real program and a
// loopback OpenAI server that answers each case's expected value (clean) or
// a wrong one for chosen cases (drift): every gated outcome has a paired
// regression test, a missing baseline is said everywhere a pipeline reads,
// and a suite recorded once with --cache replays with no provider at all.

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

#include "runner/eval/history/stored_runs.h"
#include "runner/eval/records/case_outcome.h"
#include "tests/docs/protocol_schemas.h"
#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using eval_test::ReadFile;
using eval_test::ReadRecords;
using eval_test::Skillrunner;

class EvalGatesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<test_support::LoopbackServer>();
    server_->SetResponder([this](const std::string& body) -> std::optional<test_support::ScriptedResponse> {
      if (body.find("criteria_results") != std::string::npos) {  // the judge: the rubric always passes
        ++judge_requests_;
        return test_support::ScriptedResponse{
            .body =
                test_support::OpenAiAnswer(R"({"criteria_results":[{"criterion_id":"a","reasoning":"fine",)"
                                           R"("verdict":"pass","confidence":90}],"issues":[],"suggested_fixes":[]})")};
      }
      ++generation_requests_;
      RemoveWhatWasAsked();
      std::smatch n;
      if (!std::regex_search(body, n, std::regex("Extract the total of order ([0-9]+)"))) return std::nullopt;
      int total = std::stoi(n[1]);
      std::lock_guard lock(mutex_);
      if (drifted_.contains(total)) ++total;  // a drifting model: a wrong value, still valid JSON
      return test_support::ScriptedResponse{
          .body = test_support::OpenAiAnswer(R"({"total":)" + std::to_string(total) + "}")};
    });
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + server_->base_url() +
                                        "/v1\", api_key_env: NO_KEY_NEEDED }\n"
                                        "models:\n  m: { provider: llm, structured_output: none }\n");
    tree_.Write("skills/extract/skill.yaml", R"(id: extract
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Extract the total of order {{input.n}}" }
input_schema: { type: object, required: [n], properties: { n: { type: integer } } }
output_schema: { type: object, required: [total], additionalProperties: false, properties: { total: { type: integer } } }
)");
    tree_.Write("rubrics/quality.yaml",
                "id: quality\ncriteria:\n  - { id: a, description: Plausible., required: true }\n");
    WriteSuite(20);
  }

  void WriteSuite(int cases) {
    std::string lines;
    for (int i = 1; i <= cases; ++i) {
      lines += R"({"id":"c)" + std::to_string(i) + R"(","input":{"n":)" + std::to_string(i) +
               R"(},"expected":{"total":)" + std::to_string(i) + "}}\n";
    }
    tree_.Write("skills/extract/cases.jsonl", lines);
    tree_.Write("suite.yaml",
                "id: night\nskills:\n  - skill: extract\n    rubric: quality\n    judge_model: m\n"
                "    expected: exact\nthresholds: { max_regression: 0.05 }\n");
  }

  void RemoveWhatWasAsked() {
    std::lock_guard lock(mutex_);
    std::error_code ec;
    if (!remove_on_request_.empty()) std::filesystem::remove_all(remove_on_request_, ec);
  }

  void Drift(std::set<int> cases) {
    std::lock_guard lock(mutex_);
    drifted_ = std::move(cases);
  }

  eval_test::Ran Eval(const std::string& args) {
    return Skillrunner(tree_.root(), "--config skillrunner.yaml --skills skills --rubrics rubrics eval " + args);
  }

  // summary.json, held against schemas/eval/summary.schema.json on every read.
  json::object Summary(const std::string& out) {
    json::object summary = json::parse(ReadFile(tree_.Path(out + "/summary.json"))).as_object();
    EXPECT_EQ(testing::SchemaViolations("eval/summary.schema.json", summary), "") << out;
    return summary;
  }

  static std::vector<std::string> Members(const json::object& summary, std::string_view key) {
    std::vector<std::string> out;
    for (const auto& breach : summary.at("breaches").as_array()) out.emplace_back(breach.at(key).as_string());
    return out;
  }

  std::mutex mutex_;
  std::set<int> drifted_;
  std::filesystem::path remove_on_request_;
  std::unique_ptr<test_support::LoopbackServer> server_;
  testing::TempTree tree_;
  std::atomic<int> generation_requests_{0}, judge_requests_{0};
};

// The issue's drift: 7 of 20 cases flip pass -> fail on expected values, the
// rubric unchanged. An unchanged rerun passes first.
TEST_F(EvalGatesCliTest, SevenOfTwentyExpectedValueFlipsBreachCasePassRateAndExpectedMatch) {
  auto first = Eval("suite.yaml --out out/n1 --history h.sqlite");
  ASSERT_EQ(first.status, 0) << first.err;
  auto unchanged = Eval("suite.yaml --out out/n2 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(unchanged.status, 0) << unchanged.err;
  EXPECT_EQ(Summary("out/n2").at("breaches"), json::array{});
  EXPECT_EQ(Summary("out/n2").at("baseline").at("status"), "compared");

  Drift({2, 5, 8, 11, 14, 17, 20});
  auto drifted = Eval("suite.yaml --out out/n3 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(drifted.status, 1) << drifted.err;
  json::object summary = Summary("out/n3");
  EXPECT_EQ(Members(summary, "measure"), (std::vector<std::string>{"case_pass_rate", "expected_match"}));
  EXPECT_EQ(Members(summary, "kind"), (std::vector<std::string>{"regression", "regression"}));
  EXPECT_EQ(Members(summary, "message"),
            (std::vector<std::string>{
                "extract: case pass rate fell by 0.350 against the baseline, more than the allowed 0.050 (7 "
                "pass->fail, 0 fail->pass of 20 paired cases; McNemar p = 0.0156 < 0.05)",
                "extract: expected-match rate fell by 0.350 against the baseline, more than the allowed 0.050 (7 "
                "pass->fail, 0 fail->pass of 20 paired cases; McNemar p = 0.0156 < 0.05)"}));
  const json::object& paired = summary.at("baseline").at("skills").at("extract").at("paired").as_object();
  EXPECT_EQ(paired.at("rubric").at("pass_to_fail"), 0);  // the rubric did not move
  EXPECT_EQ(paired.at("expected").at("p_value"), 0.015625);
  EXPECT_NE(drifted.err.find("breach: extract: expected-match rate fell by 0.350"), std::string::npos) << drifted.err;
  EXPECT_NE(ReadFile(tree_.Path("out/n3/report.html")).find("<td class=\"name\">expected match</td><td>20</td>"),
            std::string::npos);
}

TEST_F(EvalGatesCliTest, ThreeExpectedValueFlipsOfFiftyAreNoiseAndDoNotBreach) {
  WriteSuite(50);
  ASSERT_EQ(Eval("suite.yaml --out out/n1 --history h.sqlite").status, 0);
  Drift({10, 20, 30});
  auto drifted = Eval("suite.yaml --out out/n2 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(drifted.status, 0) << drifted.err;
  json::object summary = Summary("out/n2");
  EXPECT_EQ(summary.at("breaches"), json::array{});
  const json::object& paired = summary.at("baseline").at("skills").at("extract").at("paired").as_object();
  EXPECT_EQ(paired.at("expected").at("pass_to_fail"), 3);
  EXPECT_EQ(paired.at("expected").at("p_value"), 0.25);
  EXPECT_EQ(paired.at("outcome").at("significant"), false);
}

TEST_F(EvalGatesCliTest, BaselineLastWithNoHistorySaysSoOnStderrInTheSummaryAndInTheReport) {
  auto ran = Eval("suite.yaml --out out/n1 --history h.sqlite --baseline last");
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("\nno baseline: the history DB has no earlier run of suite night\n"), std::string::npos)
      << ran.err;
  EXPECT_EQ(Summary("out/n1").at("baseline"),
            json::parse(R"({"status":"none","reason":"the history DB has no earlier run of suite night","history":")" +
                        tree_.Path("h.sqlite").string() + R"("})"));
  const std::string report = ReadFile(tree_.Path("out/n1/report.html"));
  EXPECT_NE(report.find("<dt>Baseline</dt><dd>none: the history DB has no earlier run of suite night (no "
                        "regression checked)</dd>"),
            std::string::npos);
  // Without --baseline there is no baseline member at all.
  ASSERT_EQ(Eval("suite.yaml --out out/n2 --history h.sqlite").status, 0);
  EXPECT_FALSE(Summary("out/n2").contains("baseline"));
}

TEST_F(EvalGatesCliTest, RequireBaselineExitsTwoBeforeAnyCaseRunsAndNeedsBaseline) {
  auto refused = Eval("suite.yaml --out out/n1 --history h.sqlite --baseline last --require-baseline");
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("no baseline: the history DB has no earlier run of suite night\n"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("skillrunner eval: --require-baseline: there is nothing to compare with, so nothing "
                             "ran; keep the history DB (" +
                             tree_.Path("h.sqlite").string() + ") between runs (checked before any case ran)\n"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(generation_requests_, 0);
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("out/n1/results.jsonl")));

  auto usage = Eval("suite.yaml --out out/n2 --history h.sqlite --require-baseline");
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(usage.err,
            "skillrunner eval: --require-baseline needs --baseline (last-passing, last, pinned or a run id)\n");

  ASSERT_EQ(Eval("suite.yaml --out out/n3 --history h.sqlite").status, 0);
  auto compared = Eval("suite.yaml --out out/n4 --history h.sqlite --baseline last --require-baseline");
  EXPECT_EQ(compared.status, 0) << compared.err;
  EXPECT_EQ(Summary("out/n4").at("baseline").at("status"), "compared");
  EXPECT_EQ(Summary("out/n4").at("baseline").at("run_id"), Summary("out/n3").at("run_id"));
}

// design.md §12.3: a history that cannot be used is found before the first paid request, and the
// run leaves no --out folder: unreachable, a password in its URL, a file that is not SQLite, a
// baseline run id it does not hold; with the history configured and no --baseline too.
TEST_F(EvalGatesCliTest, AnUnusableHistoryStopsTheRunBeforeAnyRequestAndLeavesNoOutFolder) {
  struct Case {
    std::string flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"--history postgresql://127.0.0.1:1/nightly --baseline last-passing",
       "skillrunner eval: history: cannot open eval history postgresql://127.0.0.1:1/nightly: "},
      {"--history postgresql://eval:s3cret@127.0.0.1:1/nightly",
       "skillrunner eval: history: cannot open eval history postgresql://eval:***@127.0.0.1:1/nightly: the history URL "
       "postgresql://eval:***@127.0.0.1:1/nightly holds a password: give it through PGPASSWORD or PGPASSFILE"},
      {"--history junk.sqlite --baseline last", "skillrunner eval: history: cannot open eval history junk.sqlite"},
      {"--history h.sqlite --baseline 20240101T000000Z-aaaaaa",
       "skillrunner eval: baseline: baseline run 20240101T000000Z-aaaaaa is not in the eval history h.sqlite (checked "
       "before any case ran)\n"},
  };
  tree_.Write("junk.sqlite", "this is not an SQLite database, and it is long enough for SQLite to say so\n");
  for (const Case& c : cases) {
    auto refused = Eval("suite.yaml --out out/x " + c.flags);
    EXPECT_EQ(refused.status, 2) << c.flags << "\n" << refused.err;
    EXPECT_NE(refused.err.find(c.message), std::string::npos) << c.flags << "\n" << refused.err;
    EXPECT_EQ(refused.err.find("s3cret"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("(checked before any case ran)\n"), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(tree_.Path("out/x"))) << c.flags;
  }
  EXPECT_EQ(generation_requests_, 0);
  EXPECT_EQ(judge_requests_, 0);
}

// The regression gate that could not run says so in summary.json, the report and on stderr: here the
// history file becomes unwritable (a folder in its place) after the checks before the run passed.
TEST_F(EvalGatesCliTest, ARegressionGateThatCouldNotRunIsSkippedWithWhyInTheSummary) {
  ASSERT_EQ(Eval("suite.yaml --out out/n1 --history h.sqlite").status, 0);
  std::filesystem::create_directories(tree_.Path("hist"));
  std::filesystem::copy_file(tree_.Path("h.sqlite"), tree_.Path("hist/h.sqlite"));
  {
    std::lock_guard lock(mutex_);
    remove_on_request_ = tree_.Path("hist");  // the history goes away while the run is under way
  }
  auto ran = Eval("suite.yaml --out out/n2 --history hist/h.sqlite --baseline last");
  EXPECT_EQ(ran.status, 2) << ran.err;
  const json::object summary = Summary("out/n2");
  ASSERT_TRUE(summary.contains("baseline")) << ran.err;
  EXPECT_EQ(summary.at("baseline").at("status"), "skipped");
  const std::string reason(summary.at("baseline").at("reason").as_string());
  EXPECT_TRUE(reason.starts_with("history: cannot open eval history hist/h.sqlite")) << reason;
  EXPECT_NE(ran.err.find("skillrunner eval: the regression gate was skipped (no baseline compared): " + reason + "\n"),
            std::string::npos)
      << ran.err;
  EXPECT_NE(ReadFile(tree_.Path("out/n2/report.html")).find("<b>Regression gate skipped:</b> "), std::string::npos);
}

// design.md §12.3 `redact:`: the masked fields are "[redacted]" in results.jsonl, junit.xml,
// report.html, the history and the viewer; the provider is sent the real input (each case still
// gets its own total back).
TEST_F(EvalGatesCliTest, RedactedFieldsAreMaskedInEveryOutputButNotInWhatTheProviderIsSent) {
  WriteSuite(4);
  tree_.Write("private.yaml",
              "id: night\nredact: [/input/n, /output/total]\nskills:\n  - skill: extract\n    expected: exact\n");
  Drift({2});
  auto ran = Eval("private.yaml --out out/p --history h.sqlite --run-id private-1");
  ASSERT_EQ(ran.status, 0) << ran.err;
  const auto masked = json::parse(R"({"n":"[redacted]"})");
  std::map<std::string, json::object> by_case;
  for (auto& record : ReadRecords(tree_.Path("out/p/results.jsonl"))) {
    by_case[std::string(record.at("case").as_string())] = record;
    EXPECT_EQ(record.at("input"), masked);
    EXPECT_EQ(record.at("result").at("output"), json::parse(R"({"total":"[redacted]"})"));
    EXPECT_EQ(record.at("result").at("attempts").at(0).at("raw"), "[redacted]");
  }
  ASSERT_EQ(by_case.size(), 4u);
  EXPECT_EQ(by_case["c1"].at("expected_match"), true);  // the provider saw order 1 and answered 1
  EXPECT_EQ(by_case["c2"].at("expected_match"), false);
  EXPECT_EQ(by_case["c2"].at("expected_mismatches").at(0).at("message"), "[redacted]");
  EXPECT_NE(ReadFile(tree_.Path("out/p/junit.xml")).find("EXPECTED_MISMATCH: expected (root): [redacted]"),
            std::string::npos);
  EXPECT_NE(ReadFile(tree_.Path("out/p/report.html")).find("&quot;n&quot;: &quot;[redacted]&quot;"), std::string::npos);
  auto stored = eval::LoadStoredRun("private-1", tree_.Path("h.sqlite"));
  ASSERT_TRUE(stored.has_value()) << stored.error().message;
  for (const json::object& record : stored->records) {
    EXPECT_EQ(record.at("input"), masked);
    EXPECT_EQ(record.at("result").at("output"), json::parse(R"({"total":"[redacted]"})"));
  }
  auto exported = Skillrunner(tree_.root(), "view --history h.sqlite --export site");
  ASSERT_EQ(exported.status, 0) << exported.err;
  std::size_t pages_with_input = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tree_.Path("site"))) {
    if (!entry.is_regular_file()) continue;
    const std::string page = ReadFile(entry.path());
    pages_with_input += page.find(R"("input":{"n":"[redacted]"})") != std::string::npos;
    EXPECT_EQ(page.find(R"("input":{"n":1})"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(pages_with_input, 4u);  // each case's page

  // The response cache keeps requests and answers as they came: refused with a redacting suite.
  const int requests = generation_requests_;
  auto cached = Eval("private.yaml --out out/c --history h.sqlite --cache");
  EXPECT_EQ(cached.status, 2);
  EXPECT_NE(cached.err.find("skillrunner eval: --cache: suite \"night\" masks fields (redact:), and the response cache "
                            "would keep the provider's requests and answers unmasked; run it without --cache\n"),
            std::string::npos)
      << cached.err;
  EXPECT_EQ(generation_requests_, requests);
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("out/c")));
}

// design.md §12.3: five paired cases can never make max_regression fire at alpha 0.05 (all five
// flipping gives p = 0.0625): the suite says so when it loads, a suite may acknowledge it, and
// against a baseline the paired counts say underpowered.
TEST_F(EvalGatesCliTest, AGateTooSmallToEverFireIsSaidAtLoadAndInTheComparison) {
  WriteSuite(5);
  const std::string warning =
      "suite.yaml:3:5: warning: /skills/0: skill \"extract\" has 5 paired case(s) per run, too few for "
      "max_regression ever to fire at regression_alpha 0.05 (every case flipping one way still gives McNemar p = "
      "0.0625); it needs at least 6 [underpowered-gate]\n";
  auto first = Eval("suite.yaml --out out/n1 --history h.sqlite");
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.err.find(warning), std::string::npos) << first.err;
  Drift({1, 2, 3, 4, 5});
  auto drifted = Eval("suite.yaml --out out/n2 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(drifted.status, 0) << drifted.err;  // every case flipped, and still no regression can be shown
  const json::object paired = Summary("out/n2").at("baseline").at("skills").at("extract").at("paired").as_object();
  EXPECT_EQ(paired.at("expected").at("pass_to_fail"), 5);
  EXPECT_EQ(paired.at("expected").at("p_value"), 0.0625);
  EXPECT_EQ(paired.at("expected").at("underpowered"), true);
  EXPECT_NE(ReadFile(tree_.Path("out/n2/report.html"))
                .find("not significant (5 flips); underpowered: 5 paired cases can never reach p &lt; 0.05"),
            std::string::npos);

  auto validate = Skillrunner(tree_.root(),
                              "--config skillrunner.yaml --skills skills --rubrics rubrics validate "
                              "--against none --suite suite.yaml");
  EXPECT_NE(validate.out.find(warning), std::string::npos) << validate.out;
  const std::string suite = ReadFile(tree_.Path("suite.yaml"));
  tree_.Write("suite.yaml", suite + "lint: { allow: [underpowered-gate] }\n");
  auto allowed = Eval("suite.yaml --out out/n3 --history h.sqlite");
  EXPECT_EQ(allowed.status, 0) << allowed.err;
  EXPECT_EQ(allowed.err.find("underpowered-gate"), std::string::npos) << allowed.err;
  tree_.Write("suite.yaml", suite + "lint: { allow: [underpowered] }\n");
  auto unknown = Eval("suite.yaml --out out/n4 --history h.sqlite");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("suite.yaml:8:17: /lint/allow/0: "), std::string::npos) << unknown.err;
}

TEST_F(EvalGatesCliTest, MergeFollowsTheSameBaselineRules) {
  for (int i = 0; i < 2; ++i) {
    const std::string shard = std::to_string(i);
    ASSERT_EQ(Eval("suite.yaml --out out/s" + shard + " --shard " + shard + "/2 --history h.sqlite").status, 0);
  }
  auto usage = Eval("merge --out out/m0 out/s0 out/s1 --history h.sqlite --require-baseline");
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(usage.err,
            "skillrunner eval merge: --require-baseline needs --baseline (last-passing, last, pinned or a run id)\n");
  auto refused = Eval("merge --out out/m1 out/s0 out/s1 --history h.sqlite --baseline last --require-baseline");
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("no baseline: the history DB has no earlier run of suite night\n"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("out/m1/results.jsonl")));
  auto merged = Eval("merge --out out/m2 out/s0 out/s1 --history h.sqlite --baseline last");
  EXPECT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(Summary("out/m2").at("baseline").at("status"), "none");
}

// The CI recipe through two nights of drift: with --baseline last the second bad night compares
// with the first and goes green; with last-passing it compares with the last night whose gates held
// and stays red until the drift is fixed. `eval pin` names the run to compare with instead.
TEST_F(EvalGatesCliTest, TwoNightsOfDriftStayRedUnderLastPassingAndAPinnedRunIsTheBaseline) {
  const std::string gate =
      " --history h.sqlite --baseline last-passing --require-baseline --fail-on thresholds,regressions";
  ASSERT_EQ(Eval("suite.yaml --out out/n1 --history h.sqlite").status, 0);
  const json::value good_run = Summary("out/n1").at("run_id");
  Drift({2, 5, 8, 11, 14, 17, 20});
  for (const std::string night : {"out/n2", "out/n3"}) {
    auto ran = Eval("suite.yaml --out " + night + gate);
    EXPECT_EQ(ran.status, 1) << night << ran.err;
    EXPECT_EQ(Summary(night).at("baseline").at("run_id"), good_run) << night;
    EXPECT_EQ(Members(Summary(night), "kind"), (std::vector<std::string>{"regression", "regression"})) << night;
  }
  auto last = Eval("suite.yaml --out out/n4 --history h.sqlite --baseline last --fail-on regressions");
  EXPECT_EQ(last.status, 0) << last.err;  // the old recipe: compared with the bad night before
  EXPECT_EQ(Summary("out/n4").at("baseline").at("run_id"), Summary("out/n3").at("run_id"));

  auto unpinned = Eval("suite.yaml --out out/n5 --history h.sqlite --baseline pinned --require-baseline");
  EXPECT_EQ(unpinned.status, 2);
  EXPECT_NE(unpinned.err.find("no baseline: no run of suite night is pinned in the history DB (skillrunner eval pin "
                              "RUN_ID --history FILE)\n"),
            std::string::npos)
      << unpinned.err;
  const std::string bad_run(Summary("out/n2").at("run_id").as_string());
  auto pin = Skillrunner(tree_.root(), "eval pin " + bad_run + " --history h.sqlite");
  EXPECT_EQ(pin.status, 0) << pin.err;
  EXPECT_EQ(pin.out, "pinned run " + bad_run + " as the baseline of suite night (--baseline pinned) in h.sqlite\n");
  auto pinned = Eval("suite.yaml --out out/n6 --history h.sqlite --baseline pinned --fail-on thresholds,regressions");
  EXPECT_EQ(pinned.status, 0) << pinned.err;  // the pinned night drifted the same way: nothing got worse
  EXPECT_EQ(Summary("out/n6").at("baseline").at("run_id"), json::value(bad_run));
  auto unknown = Skillrunner(tree_.root(), "eval pin NOPE --history h.sqlite");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err, "skillrunner eval: run NOPE is not in the eval history h.sqlite\n");
  auto nowhere = Skillrunner(tree_.root(), "eval pin NOPE");
  EXPECT_EQ(nowhere.status, 2);
  EXPECT_EQ(nowhere.err,
            "skillrunner eval: give the history to pin the run in: --history FILE|URL, or history: in "
            "skillrunner.yaml\n");
}

// Records: case key -> outcome and output.
std::map<std::string, std::string> Outcomes(const std::vector<json::object>& records) {
  std::map<std::string, std::string> out;
  for (const auto& record : records) {
    out[eval::CaseKey(record)] = std::string(eval::CaseOutcomeName(eval::OutcomeOf(record))) + " " +
                                 (record.contains("result") ? json::serialize(record.at("result").at("output")) : "-");
  }
  return out;
}

// design.md §10.1: record once against a real provider, replay in CI with none.
TEST_F(EvalGatesCliTest, ARecordedSuiteReplaysWithTheServerStoppedAndAMissExitsTwoNamingTheCase) {
  WriteSuite(4);
  Drift({3});  // one case fails its expected value: replayed as it was
  auto recorded = Eval("suite.yaml --out out/r1 --cache c.sqlite");
  ASSERT_EQ(recorded.status, 0) << recorded.err;
  server_.reset();  // no provider from here on

  auto replayed = Eval("suite.yaml --out out/r2 --cache c.sqlite --cache-mode replay");
  EXPECT_EQ(replayed.status, 0) << replayed.err;
  EXPECT_EQ(Outcomes(ReadRecords(tree_.Path("out/r2/results.jsonl"))),
            Outcomes(ReadRecords(tree_.Path("out/r1/results.jsonl"))));
  EXPECT_EQ(Summary("out/r2").at("skills").at("extract").at("expected_match"), 0.75);
  EXPECT_EQ(Summary("out/r2").at("cache").at("mode"), "replay");
  EXPECT_EQ(Summary("out/r2").at("cache").at("hits"), 8);  // 4 generations, 4 judgings
  EXPECT_EQ(Summary("out/r2").at("cache").at("misses"), 0);

  // A changed prompt is a new request: a miss, named, exit 2, nothing recorded.
  const std::string skill = ReadFile(tree_.Path("skills/extract/skill.yaml"));
  tree_.Write("skills/extract/skill.yaml",
              std::string(skill).replace(skill.find("Extract the total"), 17, "Extract the sum"));
  auto missed = Eval("suite.yaml --out out/r3 --cache c.sqlite --cache-mode replay");
  EXPECT_EQ(missed.status, 2) << missed.err;
  EXPECT_TRUE(std::regex_search(missed.err,
                                std::regex("(^|\n)cache miss: skill extract case c1 request sha256:[0-9a-f]{64}\n")))
      << missed.err;
  EXPECT_NE(missed.err.find("skillrunner eval: --cache-mode replay: 4 request(s) are not in the cache "),
            std::string::npos)
      << missed.err;
  EXPECT_EQ(ReadRecords(tree_.Path("out/r3/results.jsonl")).size(), 0u);

  // A judge's request missing is a miss too.
  tree_.Write("skills/extract/skill.yaml", skill);
  tree_.Write("rubrics/quality.yaml",
              "id: quality\ncriteria:\n  - { id: a, description: Sensible., required: true }\n");
  auto judge_missed = Eval("suite.yaml --out out/r4 --cache c.sqlite --cache-mode replay");
  EXPECT_EQ(judge_missed.status, 2) << judge_missed.err;
  EXPECT_TRUE(std::regex_search(judge_missed.err,
                                std::regex("(^|\n)cache miss: skill extract case c4 request sha256:[0-9a-f]{64}\n")))
      << judge_missed.err;

  auto usage = Eval("suite.yaml --out out/r5 --cache-mode replay");
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(usage.err, "skillrunner eval: --cache-mode replay needs --cache\n");
}

}  // namespace
}  // namespace skillrunner
