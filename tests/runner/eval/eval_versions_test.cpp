// design.md §11.2 "before a canary": an eval suite runs a skill's candidate
// beside its stable version (`versions: both`, or `skill: ID@candidate`),
// paired per case, with McNemar between the versions, end to end with the
// real program and a loopback OpenAI server that tells the versions apart by
// their prompts; and the simulated provider rehearses a canary offline with
// faults aimed at one version.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

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

// The schemas both versions keep, and each version's own head and prompt.
constexpr std::string_view kSchemas = R"(template_type: LLM_JSON_GENERATION
model: m
input_schema: { type: object, required: [n], properties: { n: { type: integer } } }
output_schema: { type: object, required: [total], additionalProperties: false, properties: { total: { type: integer } } }
)";
const std::string kStable = "id: extract\nversion: 1\n" + std::string(kSchemas) +
                            "prompt: { user: \"Extract the total of order {{input.n}}\" }\n"
                            "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n";
const std::string kCandidate = "id: extract\nversion: 2\n" + std::string(kSchemas) +
                               "prompt: { user: \"Read order {{input.n}} and extract its total\" }\n";

class EvalVersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<test_support::LoopbackServer>();
    server_->SetResponder([this](const std::string& body) -> std::optional<test_support::ScriptedResponse> {
      std::smatch n;
      const bool candidate = std::regex_search(body, n, std::regex("Read order ([0-9]+) and extract"));
      if (!candidate && !std::regex_search(body, n, std::regex("Extract the total of order ([0-9]+)"))) {
        return std::nullopt;
      }
      int total = std::stoi(n[1]);
      std::lock_guard lock(mutex_);
      ++(candidate ? candidate_requests_ : stable_requests_);
      if (candidate && wrong_.contains(total)) ++total;  // the candidate's prompt misleads the model here
      return test_support::ScriptedResponse{
          .body = test_support::OpenAiAnswer(R"({"total":)" + std::to_string(total) + "}")};
    });
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + server_->base_url() +
                                        "/v1\", api_key_env: NO_KEY_NEEDED }\n"
                                        "models:\n  m: { provider: llm, structured_output: none }\n");
    tree_.Write("skills/extract/skill.yaml", kStable);
    tree_.Write("skills/extract/candidate.yaml", kCandidate);
    std::string lines;
    for (int i = 1; i <= 20; ++i) {
      lines += R"({"id":"c)" + std::to_string(i) + R"(","input":{"n":)" + std::to_string(i) +
               R"(},"expected":{"total":)" + std::to_string(i) + "}}\n";
    }
    tree_.Write("skills/extract/cases.jsonl", lines);
  }

  eval_test::Ran Eval(const std::string& suite, const std::string& args) {
    tree_.Write("suite.yaml", suite);
    return Skillrunner(tree_.root(), "--config skillrunner.yaml --skills skills eval suite.yaml " + args);
  }

  // summary.json, held against schemas/eval/summary.schema.json on every read.
  json::object Summary(const std::string& out) {
    json::object summary = json::parse(ReadFile(tree_.Path(out + "/summary.json"))).as_object();
    EXPECT_EQ(testing::SchemaViolations("eval/summary.schema.json", summary), "") << out;
    return summary;
  }

  std::mutex mutex_;
  std::set<int> wrong_;
  int stable_requests_ = 0, candidate_requests_ = 0;
  std::unique_ptr<test_support::LoopbackServer> server_;
  testing::TempTree tree_;
};

constexpr std::string_view kBoth =
    "id: canary\nskills:\n  - skill: extract\n    versions: both\n    expected: exact\n"
    "thresholds: { max_regression: 0.05 }\n";

TEST_F(EvalVersionsTest, VersionsBothPairsEachCaseAndACandidateWorseThanStableBreaches) {
  wrong_ = {2, 5, 8, 11, 14, 17, 20};
  auto ran = Eval(std::string(kBoth), "--out out/n1 --history h.sqlite");
  EXPECT_EQ(ran.status, 1) << ran.err;
  EXPECT_EQ(stable_requests_, 20);
  EXPECT_EQ(candidate_requests_, 20);

  auto records = ReadRecords(tree_.Path("out/n1/results.jsonl"));
  ASSERT_EQ(records.size(), 40u);
  std::size_t candidates = 0;
  for (const auto& record : records) {
    const bool is_candidate = record.contains("version");
    candidates += is_candidate;
    EXPECT_EQ(record.at("result").at("skill_version"), is_candidate ? 2 : 1) << json::serialize(record);
    if (is_candidate) {
      EXPECT_EQ(record.at("version"), 2);
    }
  }
  EXPECT_EQ(candidates, 20u);

  json::object summary = Summary("out/n1");
  EXPECT_EQ(summary.at("skills").at("extract").at("expected_match"), 1.0);
  EXPECT_EQ(summary.at("skills").at("extract@2").at("expected_match"), 0.65);
  const json::object& versions = summary.at("versions").at(0).as_object();
  EXPECT_EQ(versions.at("skill"), "extract");
  EXPECT_EQ(versions.at("stable_version"), 1);
  EXPECT_EQ(versions.at("candidate_version"), 2);
  EXPECT_EQ(versions.at("candidate"), "extract@2");
  const json::object& expected = versions.at("paired").at("expected").as_object();
  EXPECT_EQ(expected.at("cases"), 20);
  EXPECT_EQ(expected.at("baseline_rate"), 1.0);
  EXPECT_EQ(expected.at("rate"), 0.65);
  EXPECT_EQ(expected.at("pass_to_fail"), 7);
  EXPECT_EQ(expected.at("fail_to_pass"), 0);
  EXPECT_EQ(expected.at("p_value"), 0.015625);
  EXPECT_EQ(versions.at("flipped").as_array().size(), 7u);
  EXPECT_EQ(versions.at("flipped").at(0),
            json::parse(R"({"skill":"extract@2","case":"c11","from":"pass","to":"fail"})"));

  std::vector<std::string> messages;
  for (const auto& breach : summary.at("breaches").as_array()) {
    EXPECT_EQ(breach.at("against"), "stable");
    messages.emplace_back(breach.at("message").as_string());
  }
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "extract@2: case pass rate fell by 0.350 against the stable version, more than the allowed "
                          "0.050 (7 pass->fail, 0 fail->pass of 20 paired cases; McNemar p = 0.0156 < 0.05)",
                          "extract@2: expected-match rate fell by 0.350 against the stable version, more than the "
                          "allowed 0.050 (7 pass->fail, 0 fail->pass of 20 paired cases; McNemar p = 0.0156 < 0.05)"}));
  const std::string report = ReadFile(tree_.Path("out/n1/report.html"));
  EXPECT_NE(report.find("<section id=\"versions\"><h2>Candidate against stable</h2>"), std::string::npos);
  EXPECT_NE(report.find("<td class=\"name\">extract@2 vs extract@1</td><td class=\"name\">expected match</td>"
                        "<td>20</td><td>100.0% (83.9%–100.0%)</td><td>65.0% (43.3%–81.9%)</td><td>7</td><td>0</td>"
                        "<td>0.0156</td><td class=\"name breach\">significant drop</td>"),
            std::string::npos);
  EXPECT_NE(ReadFile(tree_.Path("out/n1/junit.xml")).find("<testsuite name=\"extract@2\""), std::string::npos);

  // The history keeps both versions' cases apart: the next night pairs each with its own.
  wrong_.clear();
  auto next = Eval(std::string(kBoth), "--out out/n2 --history h.sqlite --baseline last");
  EXPECT_EQ(next.status, 0) << next.err;
  json::object second = Summary("out/n2");
  EXPECT_EQ(second.at("breaches"), json::array{});
  EXPECT_EQ(second.at("baseline").at("skills").at("extract").at("paired").at("expected").at("pass_to_fail"), 0);
  const json::object& healed =
      second.at("baseline").at("skills").at("extract@2").at("paired").at("expected").as_object();
  EXPECT_EQ(healed.at("cases"), 20);
  EXPECT_EQ(healed.at("fail_to_pass"), 7);
}

// design.md §12.3: the viewer's candidate-against-stable page says what summary.json's versions says:
// per measure both rates, the flips both ways and McNemar p, and the flipped cases side by side.
TEST_F(EvalVersionsTest, TheViewersCandidatePageAgreesWithTheSummarysVersions) {
  wrong_ = {2, 5, 8, 11, 14, 17, 20};
  ASSERT_EQ(Eval(std::string(kBoth), "--out out/n1 --history h.sqlite --run-id canary-1").status, 1);
  const json::object versions = Summary("out/n1").at("versions").at(0).as_object();
  auto exported = Skillrunner(tree_.root(), "view --history h.sqlite --export site");
  ASSERT_EQ(exported.status, 0) << exported.err;
  const std::string page = ReadFile(tree_.Path("site/versions/canary-1.html"));
  const std::string open = "<script type=\"application/json\" id=\"page-data\">";
  const std::size_t from = page.find(open) + open.size();
  const json::object data = json::parse(page.substr(from, page.find("</script>", from) - from)).as_object();
  EXPECT_EQ(testing::SchemaViolations("view/versions.schema.json", data), "");
  const json::object& shown = data.at("versions").at(0).as_object();
  EXPECT_EQ(shown.at("candidate"), "extract@2");
  EXPECT_EQ(shown.at("stable_version"), 1);
  for (const json::value& m : shown.at("measures").as_array()) {
    const std::string measure(m.at("measure").as_string());
    if (measure.starts_with("criterion:")) continue;
    const json::value& paired = versions.at("paired").at(measure);
    for (const auto& [mine, theirs] : {std::pair{"cases", "cases"},
                                       {"b_rate", "baseline_rate"},
                                       {"a_rate", "rate"},
                                       {"pass_to_fail", "pass_to_fail"},
                                       {"fail_to_pass", "fail_to_pass"},
                                       {"p_value", "p_value"},
                                       {"significant", "significant"}}) {
      EXPECT_EQ(m.at(mine), paired.at(theirs)) << measure << " " << mine;
    }
  }
  std::vector<std::string> flipped, summarised;
  for (const json::value& f : shown.at("flips").as_array()) {
    flipped.emplace_back(f.at("case").as_string());
    EXPECT_EQ(f.at("direction"), "pass_to_fail");
    EXPECT_EQ(f.at("b").at("outcome"), "pass");  // the stable side
    EXPECT_EQ(f.at("a").at("gates").at(0).at("type"), "EXPECTED_MISMATCH");
  }
  for (const json::value& f : versions.at("flipped").as_array()) summarised.emplace_back(f.at("case").as_string());
  std::sort(flipped.begin(), flipped.end());
  std::sort(summarised.begin(), summarised.end());
  EXPECT_EQ(flipped, summarised);
  EXPECT_EQ(flipped.size(), 7u);
  // The run page links to it; a run without versions answers 404 with why.
  EXPECT_NE(ReadFile(tree_.Path("site/runs/canary-1.html")).find("\"versions\":true"), std::string::npos);
}

TEST_F(EvalVersionsTest, ACandidateNoWorseThanStableIsPairedAndPasses) {
  wrong_ = {4};  // one flip of twenty is noise
  auto ran = Eval(std::string(kBoth), "--out out/n1 --history h.sqlite");
  EXPECT_EQ(ran.status, 0) << ran.err;
  json::object summary = Summary("out/n1");
  EXPECT_EQ(summary.at("breaches"), json::array{});
  const json::object& outcome = summary.at("versions").at(0).at("paired").at("outcome").as_object();
  EXPECT_EQ(outcome.at("pass_to_fail"), 1);
  EXPECT_EQ(outcome.at("p_value"), 1.0);
  EXPECT_EQ(outcome.at("significant"), false);
}

// The suite's regression_alpha decides between the versions as it does against a baseline.
TEST_F(EvalVersionsTest, TheSuitesRegressionAlphaDecidesWhetherTheCandidatesDropIsReal) {
  wrong_ = {2, 5, 8, 11, 14, 17, 20};  // p = 0.0156: real at 0.05, not at 0.01
  auto ran = Eval(std::string(kBoth) + "regression_alpha: 0.01\n", "--out out/n1 --history h.sqlite");
  EXPECT_EQ(ran.status, 0) << ran.err;
  json::object summary = Summary("out/n1");
  EXPECT_EQ(summary.at("breaches"), json::array{});
  const json::object& versions = summary.at("versions").at(0).as_object();
  EXPECT_EQ(versions.at("regression_alpha"), 0.01);
  EXPECT_EQ(versions.at("paired").at("expected").at("p_value"), 0.015625);
  EXPECT_EQ(versions.at("paired").at("expected").at("significant"), false);
}

TEST_F(EvalVersionsTest, SkillAtCandidateRunsTheCandidateAloneWithNoComparison) {
  auto ran = Eval("id: canary\nskills:\n  - skill: extract@candidate\n", "--out out/n1 --history h.sqlite");
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(stable_requests_, 0);
  EXPECT_EQ(candidate_requests_, 20);
  json::object summary = Summary("out/n1");
  EXPECT_FALSE(summary.contains("versions"));
  ASSERT_EQ(summary.at("skills").as_object().size(), 1u);
  EXPECT_EQ(summary.at("skills").at("extract@2").at("cases"), 20);
}

TEST_F(EvalVersionsTest, AskingForACandidateThatIsNotThereSaysWhere) {
  tree_.Write("skills/extract/skill.yaml", kStable.substr(0, kStable.find("rollout:")));
  auto both = Eval("id: canary\nskills:\n  - skill: extract\n    versions: both\n", "--out out/n1");
  EXPECT_EQ(both.status, 2) << both.err;
  EXPECT_NE(both.err.find("suite.yaml:4:15: /skills/0/versions: skill \"extract\" has no candidate to run (its "
                          "skill.yaml has no rollout: block)\n"),
            std::string::npos)
      << both.err;
  auto at = Eval("id: canary\nskills:\n  - skill: extract@candidate\n", "--out out/n2");
  EXPECT_EQ(at.status, 2) << at.err;
  EXPECT_NE(at.err.find("suite.yaml:3:12: /skills/0/skill: skill \"extract\" has no candidate to run"),
            std::string::npos)
      << at.err;
  auto twice = Eval("id: canary\nskills:\n  - skill: extract@candidate\n    versions: both\n", "--out out/n3");
  EXPECT_EQ(twice.status, 2) << twice.err;
  EXPECT_NE(twice.err.find("suite.yaml:4:15: /skills/0/versions: give either versions or \"skill: "
                           "extract@candidate\", not both\n"),
            std::string::npos)
      << twice.err;
  EXPECT_EQ(stable_requests_ + candidate_requests_, 0);
}

// A canary rehearsed offline: a config fault aimed at version 2, and the candidate's own
// simulation block, reach only the candidate's requests.
TEST_F(EvalVersionsTest, TheSimulatedProviderAimsFaultsAtOneVersion) {
  tree_.Write(
      "sim.yaml",
      "providers:\n  simulated:\n    kind: simulated\n    faults:\n"
      "      - { skill: extract, version: 2, attempt: [1, 2], fault: wrong_type, path: /total, probability: 0.5 }\n"
      "models:\n  m: { provider: simulated, structured_output: none }\n");
  tree_.Write("suite.yaml", "id: canary\nskills:\n  - skill: extract\n    versions: both\n");
  auto ran = Skillrunner(tree_.root(), "--config sim.yaml --skills skills eval suite.yaml --out out/n1");
  json::object summary = Summary("out/n1");
  EXPECT_EQ(summary.at("skills").at("extract").at("schema_compliance"), 1.0);
  const double candidate = summary.at("skills").at("extract@2").at("schema_compliance").as_double();
  EXPECT_LT(candidate, 1.0);  // both attempts drew the fault on some inputs (a quarter of them, as drawn)
  EXPECT_GT(candidate, 0.5);
  EXPECT_EQ(ran.status, 0) << ran.err;

  tree_.Write("skills/extract/candidate.yaml",
              kCandidate + "simulation:\n  faults:\n    - { attempt: [1, 2], fault: wrong_type, path: /total }\n");
  tree_.Write("sim.yaml",
              "providers:\n  simulated: { kind: simulated }\n"
              "models:\n  m: { provider: simulated, structured_output: none }\n");
  auto own = Skillrunner(tree_.root(), "--config sim.yaml --skills skills eval suite.yaml --out out/n2");
  EXPECT_EQ(own.status, 0) << own.err;
  json::object second = Summary("out/n2");
  EXPECT_EQ(second.at("skills").at("extract").at("schema_compliance"), 1.0);
  EXPECT_EQ(second.at("skills").at("extract@2").at("schema_compliance"), 0.0);
  EXPECT_EQ(second.at("skills").at("extract@2").at("errors").at("MAX_RETRIES_EXCEEDED"), 20);
}

}  // namespace
}  // namespace skillrunner
