// A provider that enforces its rate limit (design.md §9.6), met by a whole
// `skillrunner eval` process with nothing configured: a loopback OpenAI
// server that, like nginx `limit_req` without burst, answers 429 with
// `Retry-After: 1` to every request closer than 1/rate to the last it took.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/runner/name_skill_tree.h"
#include "tests/support/child_process.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using test_support::LoopbackServer;
using test_support::OpenAiAnswer;
using testing::TempTree;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RateLimitTest, AnEvalWithNothingConfiguredLearnsTheLimitLosesNoCaseAndIsRarelyRefusedOnceLearned) {
  TempTree tree;
  LoopbackServer llm;
  llm.SetDefault({.body = OpenAiAnswer(R"({"name":"Ada"})")});
  llm.SetRateLimit(50, 1);
  testing::WriteNameSkillTree(tree, llm.base_url());
  std::string cases;
  for (int i = 0; i < 500; ++i) cases += "{\"id\": \"c" + std::to_string(i) + "\", \"input\": {}}\n";
  tree.Write("skills/name/cases.jsonl", cases);
  tree.Write("suite.yaml", "id: limited\nskills:\n  - skill: name\n");
  test_support::ChildProcess eval(
      SKILLRUNNER_BINARY,
      {"eval", tree.Path("suite.yaml").string(), "--out", tree.Path("out").string(), "--concurrency", "16", "--config",
       tree.Path("skillrunner.yaml").string(), "--skills", tree.Path("skills").string(), "--rubrics",
       tree.Path("rubrics").string()},
      test_support::CleanEnvironment({"TEST_LLM_KEY=sk-test-key"}), {}, {}, tree.Path("eval.stderr"));
  ASSERT_EQ(eval.Wait(60s), 0) << ReadFile(tree.Path("eval.stderr"));

  // No case lost.
  std::istringstream results(ReadFile(tree.Path("out/results.jsonl")));
  int records = 0;
  for (std::string line; std::getline(results, line);) {
    json::value record = json::parse(line);
    EXPECT_FALSE(record.as_object().contains("error")) << line;
    ++records;
  }
  EXPECT_EQ(records, 500);
  // After the first second (the first burst, refused but for one, and its Retry-After), at
  // most 5% refused: the limit is learned with few 429s and then held.
  auto requests = llm.requests();
  ASSERT_FALSE(requests.empty());
  test_support::RefusalCount later = test_support::RefusedAfter(requests, 1s);
  EXPECT_LE(later.refused * 20, later.requests)
      << later.refused << " of " << later.requests
      << " refused after the first second; each 250 ms: " << test_support::RefusalTimeline(requests);
  EXPECT_EQ(requests.size() - llm.refused_count(), 500u);  // each case's request taken once
}

}  // namespace
}  // namespace skillrunner
