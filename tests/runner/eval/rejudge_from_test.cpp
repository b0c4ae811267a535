// design.md §9.5 --rejudge-from: an earlier run's stored outputs judged again
// with today's rubric, as a new run, against a loopback provider that counts
// what it is asked: judging requests only, never a generation request.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <mutex>

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

constexpr int kCases = 5;

class RejudgeFromTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A judge request carries the verdict schema; anything else is the skill's generation.
    server_.SetResponder([this](const std::string& body) -> std::optional<test_support::ScriptedResponse> {
      const bool judging = body.find("criteria_results") != std::string::npos;
      (judging ? judge_requests_ : generation_requests_)++;
      if (body.find("a_better") != std::string::npos) return Pairwise(body);
      if (!judging) {
        std::lock_guard lock(labels_mutex_);  // the server's thread reads what the test's thread wrote
        for (const auto& [text, label] : labels_) {
          if (body.find("Label " + text + "\"") != std::string::npos) {
            return test_support::ScriptedResponse{.body =
                                                      test_support::OpenAiAnswer(R"({"label":")" + label + R"("})")};
          }
        }
      }
      std::string verdict =
          R"({"criteria_results":[{"criterion_id":"a","reasoning":"fine","verdict":"pass","confidence":90})";
      if (body.find(R"(\"b\")") != std::string::npos || body.find("criterion b") != std::string::npos ||
          body.find("Second.") != std::string::npos) {
        verdict += R"(,{"criterion_id":"b","reasoning":"too long","verdict":"fail","confidence":90})";
      }
      verdict += R"(],"issues":[],"suggested_fixes":[]})";
      return test_support::ScriptedResponse{.body =
                                                test_support::OpenAiAnswer(judging ? verdict : R"({"label":"spam"})")};
    });
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + server_.base_url() +
                                        "/v1\", api_key_env: NO_KEY_NEEDED }\n"
                                        "models:\n  m: { provider: llm, structured_output: none }\n");
    tree_.Write("skills/label/skill.yaml", R"(id: label
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Label {{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [label], additionalProperties: false, properties: { label: { type: string } } }
)");
    std::string cases;
    // Distinct inputs: identical requests of one run would share a cache entry.
    for (int i = 1; i <= kCases; ++i) {
      cases += R"({"id":"c)" + std::to_string(i) + R"(","input":{"text":"t)" + std::to_string(i) +
               R"("}})"
               "\n";
    }
    tree_.Write("skills/label/cases.jsonl", cases);
    tree_.Write("rubrics/quality.yaml", "id: quality\ncriteria:\n  - { id: a, description: First., required: true }\n");
    tree_.Write("suite.yaml", "id: night\nskills:\n  - skill: label\n    rubric: quality\n    judge_model: m\n");
  }

  eval_test::Ran Eval(const std::string& args) {
    return Skillrunner(tree_.root(),
                       "--config skillrunner.yaml --skills skills --rubrics rubrics eval suite.yaml " + args);
  }

  // A pairwise judge that prefers a "good" label, and A when it cannot tell
  // (a position bias the swapped order exposes).
  static test_support::ScriptedResponse Pairwise(const std::string& body) {
    const bool a_good = body.find(R"(\"A\":{\"label\":\"good\"})") != std::string::npos;
    const bool b_good = body.find(R"(\"B\":{\"label\":\"good\"})") != std::string::npos;
    const std::string verdict = a_good == b_good ? "pass" : a_good ? "pass" : "fail";
    return {.body = test_support::OpenAiAnswer(R"({"criteria_results":[{"criterion_id":"a_better","reasoning":"r",)"
                                               R"("verdict":")" +
                                               verdict +
                                               R"(","confidence":90}],"issues":[],)"
                                               R"("suggested_fixes":[]})")};
  }

  void SetLabels(std::map<std::string, std::string> labels) {
    std::lock_guard lock(labels_mutex_);
    labels_ = std::move(labels);
  }

  std::mutex labels_mutex_;
  std::map<std::string, std::string> labels_;  // generation: input text -> label (default spam)
  test_support::LoopbackServer server_;
  testing::TempTree tree_;
  std::atomic<int> generation_requests_{0}, judge_requests_{0};
};

TEST_F(RejudgeFromTest, StoredOutputsAreJudgedWithTodaysRubricAndNothingIsGenerated) {
  auto first = Eval("--out out/r1");
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_EQ(generation_requests_, kCases);
  ASSERT_EQ(judge_requests_, kCases);
  const std::string first_run(json::parse(ReadFile(tree_.Path("out/r1/summary.json"))).at("run_id").as_string());

  // Today's rubric has a second criterion, which the judge fails.
  tree_.Write("rubrics/quality.yaml",
              "id: quality\ncriteria:\n  - { id: a, description: First., required: true }\n"
              "  - { id: b, description: Second., required: true }\n");
  auto again = Eval("--out out/r2 --rejudge-from out/r1");
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(generation_requests_, kCases);  // none more
  EXPECT_EQ(judge_requests_, 2 * kCases);
  EXPECT_NE(again.err.find("judging the stored outputs of run " + first_run + " again; no generation request"),
            std::string::npos)
      << again.err;
  json::object summary = json::parse(ReadFile(tree_.Path("out/r2/summary.json"))).as_object();
  EXPECT_NE(std::string(summary.at("run_id").as_string()), first_run);  // a new run
  EXPECT_EQ(summary.at("skills").at("label").at("cases"), kCases);
  EXPECT_EQ(summary.at("skills").at("label").at("criteria").at("b").at("failed"), kCases);
  auto records = ReadRecords(tree_.Path("out/r2/results.jsonl"));
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kCases));
  EXPECT_EQ(std::string(records[0].at("rejudged_from").as_string()), first_run);
  EXPECT_EQ(records[0].at("result").at("output"), json::parse(R"({"label":"spam"})"));

  // By run id, through the history (it names the run's folder).
  auto by_id = Eval("--out out/r3 --rejudge-from " + first_run);
  EXPECT_EQ(by_id.status, 0) << by_id.err;
  EXPECT_EQ(generation_requests_, kCases);
  EXPECT_EQ(judge_requests_, 3 * kCases);

  auto unknown = Eval("--out out/r4 --rejudge-from no-such-run");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("skillrunner eval: --rejudge-from: \"no-such-run\" is neither a run folder nor a run "
                             "in " +
                             tree_.Path("out/eval-history.sqlite").string() + "\n"),
            std::string::npos)
      << unknown.err;
  // A run of another suite is not today's cases.
  tree_.Write("other.yaml", "id: other\nskills:\n  - skill: label\n    rubric: quality\n    judge_model: m\n");
  auto other = Skillrunner(tree_.root(),
                           "--config skillrunner.yaml --skills skills --rubrics rubrics eval other.yaml "
                           "--out out/r5 --rejudge-from out/r1");
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(
      other.err.find("skillrunner eval: --rejudge-from: run " + first_run + " is of suite \"night\", not \"other\""),
      std::string::npos)
      << other.err;
  EXPECT_EQ(judge_requests_, 3 * kCases);
}

// design.md §9.5 --cache: a warm rerun asks the provider nothing; a changed
// prompt, temperature, model, schema or repeat index is a new request.
TEST_F(RejudgeFromTest, AWarmCacheMakesNoProviderRequestAndAnythingChangedMisses) {
  auto cold = Eval("--out out/c1 --cache");
  ASSERT_EQ(cold.status, 0) << cold.err;
  ASSERT_EQ(generation_requests_, kCases);
  ASSERT_EQ(judge_requests_, kCases);
  EXPECT_EQ(json::parse(ReadFile(tree_.Path("out/c1/summary.json"))).at("cache"),
            json::parse(R"({"file":")" + tree_.Path("out/eval-cache.sqlite").string() +
                        R"(","mode":"read-write","hits":0,"misses":10})"));

  auto warm = Eval("--out out/c2 --cache");
  ASSERT_EQ(warm.status, 0) << warm.err;
  EXPECT_EQ(generation_requests_, kCases);  // no request at all
  EXPECT_EQ(judge_requests_, kCases);
  EXPECT_EQ(json::parse(ReadFile(tree_.Path("out/c2/summary.json"))).at("cache").at("hits"), 10);
  EXPECT_NE(warm.err.find(": 10 hit(s), 0 miss(es) (a hit makes no provider request)"), std::string::npos) << warm.err;
  auto records = ReadRecords(tree_.Path("out/c2/results.jsonl"));
  EXPECT_EQ(records[0].at("result").at("attempts").at(0).at("from_cache"), true);
  EXPECT_EQ(records[0].at("result").at("output"), json::parse(R"({"label":"spam"})"));

  // Each change makes the generation requests new (the judge sees the same output: still cached).
  const std::string skill = ReadFile(tree_.Path("skills/label/skill.yaml"));
  const std::pair<std::string, std::string> changes[] = {
      {"prompt", std::string(skill).replace(skill.find("Label {{"), 8, "Name {{")},
      {"temperature", skill + "temperature: 0.3\n"},
      {"model", std::string(skill).replace(skill.find("model: m"), 8, "model: m2")},
      {"schema", std::string(skill).replace(skill.find("label: { type: string }"), 23,
                                            "label: { type: string, maxLength: 40 }")}};
  tree_.Write("skillrunner.yaml",
              ReadFile(tree_.Path("skillrunner.yaml")) + "  m2: { provider: llm, structured_output: none }\n");
  int expected_generations = kCases, run = 3;
  for (const auto& [what, yaml] : changes) {
    tree_.Write("skills/label/skill.yaml", yaml);
    auto changed = Eval("--out out/c" + std::to_string(run++) + " --cache");
    EXPECT_EQ(changed.status, 0) << what << ": " << changed.err;
    expected_generations += kCases;
    EXPECT_EQ(generation_requests_, expected_generations) << what;
    EXPECT_EQ(judge_requests_, kCases) << what;
    tree_.Write("skills/label/skill.yaml", skill);
  }
  // Repeats 2: each repeat is seeded with its index, so both are new requests.
  tree_.Write("suite.yaml", ReadFile(tree_.Path("suite.yaml")) + "repeats: 2\n");
  auto repeated = Eval("--out out/c9 --cache");
  EXPECT_EQ(repeated.status, 0) << repeated.err;
  EXPECT_EQ(generation_requests_, expected_generations + 2 * kCases);
  // And the same again is all hits.
  auto again = Eval("--out out/c10 --cache --cache-ttl 1h");
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(generation_requests_, expected_generations + 2 * kCases);
  auto ttl_alone = Eval("--out out/c11 --cache-ttl 1h");
  EXPECT_EQ(ttl_alone.status, 2);
  EXPECT_NE(ttl_alone.err.find("skillrunner eval: --cache-ttl needs --cache\n"), std::string::npos) << ttl_alone.err;
  auto bad_ttl = Eval("--out out/c12 --cache --cache-ttl 3w");
  EXPECT_EQ(bad_ttl.status, 2);
  EXPECT_NE(bad_ttl.err.find("skillrunner eval: --cache-ttl: unknown unit \"w\" (expected s, m, h or d)\n"),
            std::string::npos)
      << bad_ttl.err;
}

// design.md §9.5 eval compare: each pair judged twice with the order swapped; a
// judge that changes its mind with the order is a tie; a sign test per skill.
TEST_F(RejudgeFromTest, CompareJudgesEachPairBothWaysAndCountsOrderDisagreementsAsTies) {
  SetLabels({{"t1", "good"}, {"t2", "good"}, {"t3", "good"}, {"t4", "bad"}, {"t5", "same"}});
  ASSERT_EQ(Eval("--out out/a").status, 0);
  SetLabels({{"t1", "bad"}, {"t2", "bad"}, {"t3", "bad"}, {"t4", "good"}, {"t5", "same"}});
  ASSERT_EQ(Eval("--out out/b").status, 0);
  const int generations = generation_requests_;
  const int judged = judge_requests_;

  auto compared = Skillrunner(tree_.root(),
                              "--config skillrunner.yaml --skills skills --rubrics rubrics eval compare "
                              "out/a out/b --rubric quality --out out/cmp");
  ASSERT_EQ(compared.status, 0) << compared.err;
  EXPECT_EQ(generation_requests_, generations);     // nothing generated
  EXPECT_EQ(judge_requests_, judged + 2 * kCases);  // every pair twice
  json::object result = json::parse(ReadFile(tree_.Path("out/cmp/compare.json"))).as_object();
  EXPECT_EQ(result.at("skills").at("label"),
            json::parse(R"({"pairs":5,"a_wins":3,"b_wins":1,"ties":1,"order_disagreements":1,"judge_errors":0,)"
                        R"("sign_test_p":0.625})"));
  const json::array& cases = result.at("cases").as_array();
  EXPECT_EQ(cases.at(4), json::parse(R"({"skill":"label","case":"c5","a_first":"a","b_first":"b","result":"tie"})"));
  EXPECT_EQ(cases.at(3), json::parse(R"({"skill":"label","case":"c4","a_first":"b","b_first":"b","result":"b"})"));
  EXPECT_NE(
      compared.err.find("label: A wins 3, B wins 1, ties 1 (1 from the order), judge errors 0; sign test p = 0.625"),
      std::string::npos)
      << compared.err;
  auto unknown_rubric = Skillrunner(tree_.root(),
                                    "--config skillrunner.yaml --skills skills --rubrics rubrics eval "
                                    "compare out/a out/b --rubric qualty --out out/cmp2");
  EXPECT_EQ(unknown_rubric.status, 2);
  EXPECT_NE(unknown_rubric.err.find("skillrunner eval compare: unknown rubric \"qualty\"\n"), std::string::npos)
      << unknown_rubric.err;
  const std::string html = ReadFile(tree_.Path("out/cmp/compare.html"));
  EXPECT_NE(html.find("<td class=\"name\">label</td><td>5</td><td>3</td><td>1</td><td>1</td><td>1</td><td>0</td>"
                      "<td>0.625</td>"),
            std::string::npos);
}

}  // namespace
}  // namespace skillrunner
