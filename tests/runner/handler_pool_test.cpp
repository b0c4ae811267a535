// Handlers are a bounded pool (design.md §12.0): at most handler_concurrency child processes at once
// per eval or serve, and a handler's timeout_ms counts from its exec, not from its wait for a place.
// Whole `skillrunner eval` and `serve` processes, with handlers that record what runs beside them.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/runner/server/serve_process.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::ReadFile;
using testing::TempTree;

// A config with nothing to say about processes.
constexpr const char* kConfig = "default_provider: sim\nproviders:\n  sim: { kind: simulated }\n";

// A handler that, once started, counts the handlers alive beside it (itself included) into
// alive/counts, stays `seconds`, and answers {ok: true}.
void WriteCountingSkill(const TempTree& tree, const std::string& extra = "", const std::string& seconds = "0.2") {
  tree.Write("skills/count/skill.yaml", "id: count\nhandler: exec\ncommand: [sh, ./count.sh]\n" + extra +
                                            "input_schema: { type: object }\noutput_schema: { type: object }\n");
  tree.Write("skills/count/count.sh",
             "cat >/dev/null\n"
             "mkdir -p alive\n"
             "touch alive/pid.$$\n"
             "ls alive | grep -c '^pid\\.' >> alive/counts\n"
             "sleep " +
                 seconds +
                 "\n"
                 "rm alive/pid.$$\n"
                 "echo '{\"ok\": true}'\n");
  std::string cases;
  for (int i = 0; i < 12; ++i) cases += "{\"id\": \"c" + std::to_string(i) + "\", \"input\": {}}\n";
  tree.Write("skills/count/cases.jsonl", cases);
  tree.Write("suite.yaml", "id: pool\nskills:\n  - skill: count\n");
  tree.Write("skillrunner.yaml", kConfig);
  std::filesystem::create_directories(tree.Path("rubrics"));
}

// The most handlers any of them saw alive at once.
int MostAlive(const TempTree& tree) {
  std::istringstream counts(ReadFile(tree.Path("skills/count/alive/counts")));
  int most = 0;
  for (int count = 0; counts >> count;) most = std::max(most, count);
  return most;
}

int RunEval(const TempTree& tree, std::vector<std::string> extra) {
  std::vector<std::string> args{
      "eval", tree.Path("suite.yaml").string(), "--out", tree.Path("out").string(), "--concurrency", "12"};
  for (const std::string& flag : tree.TreeFlags()) args.push_back(flag);
  args.insert(args.end(), extra.begin(), extra.end());
  test_support::ChildProcess eval(SKILLRUNNER_BINARY, args, test_support::CleanEnvironment({}), {}, {},
                                  tree.Path("eval.stderr"));
  return eval.Wait(120s);
}

// Each record of out/results.jsonl without an error.
int Passed(const TempTree& tree) {
  std::istringstream results(ReadFile(tree.Path("out/results.jsonl")));
  int passed = 0;
  for (std::string line; std::getline(results, line);) {
    if (!json::parse(line).as_object().contains("error")) ++passed;
  }
  return passed;
}

TEST(HandlerPoolTest, AtMostHandlerConcurrencyHandlersRunAtOnce) {
  TempTree tree;
  WriteCountingSkill(tree);
  ASSERT_EQ(RunEval(tree, {"--handler-concurrency", "2"}), 0) << ReadFile(tree.Path("eval.stderr"));
  EXPECT_EQ(Passed(tree), 12);
  EXPECT_EQ(MostAlive(tree), 2);  // 12 cases in flight, two processes at a time
}

TEST(HandlerPoolTest, TheConfigSetsThePlacesAndASkillsMaxConcurrentGivesItItsOwn) {
  TempTree tree;
  WriteCountingSkill(tree, "max_concurrent: 4\n");
  tree.Write("skillrunner.yaml", std::string(kConfig) + "handler_concurrency: 1\n");
  ASSERT_EQ(RunEval(tree, {}), 0) << ReadFile(tree.Path("eval.stderr"));
  EXPECT_EQ(MostAlive(tree), 4);  // its own four places, not the shared one
  std::filesystem::remove_all(tree.Path("out"));
  std::filesystem::remove_all(tree.Path("skills/count/alive"));
  WriteCountingSkill(tree);
  tree.Write("skillrunner.yaml", std::string(kConfig) + "handler_concurrency: 1\n");
  ASSERT_EQ(RunEval(tree, {}), 0) << ReadFile(tree.Path("eval.stderr"));
  EXPECT_EQ(MostAlive(tree), 1);
}

// 40 handlers that each need 0.3 s of CPU, all in flight, on this machine's cores: each timed from
// its own start, none runs past its 3 s (all at once, each would take a fortieth of the cores).
TEST(HandlerPoolTest, ATimeoutCountsFromTheHandlersStartNotItsWaitForAPlace) {
  TempTree tree;
  tree.Write("skills/burn/skill.yaml",
             "id: burn\nhandler: exec\ncommand: [python3, ./burn.py]\ntimeout_ms: 3000\n"
             "input_schema: { type: object }\noutput_schema: { type: object }\n");
  tree.Write("skills/burn/burn.py",
             "import json, sys, time\n"
             "sys.stdin.read()\n"
             "while time.process_time() < 0.3:\n"
             "    pass\n"
             "print(json.dumps({'ok': True}))\n");
  std::string cases;
  for (int i = 0; i < 40; ++i) cases += "{\"id\": \"c" + std::to_string(i) + "\", \"input\": {}}\n";
  tree.Write("skills/burn/cases.jsonl", cases);
  tree.Write("suite.yaml", "id: burn\nconcurrency: 40\nskills:\n  - skill: burn\n");
  tree.Write("skillrunner.yaml", kConfig);
  std::filesystem::create_directories(tree.Path("rubrics"));
  std::vector<std::string> args{"eval", tree.Path("suite.yaml").string(), "--out", tree.Path("out").string()};
  for (const std::string& flag : tree.TreeFlags()) args.push_back(flag);
  test_support::ChildProcess eval(SKILLRUNNER_BINARY, args, test_support::CleanEnvironment({}), {}, {},
                                  tree.Path("eval.stderr"));
  ASSERT_EQ(eval.Wait(180s), 0) << ReadFile(tree.Path("eval.stderr"));
  EXPECT_EQ(Passed(tree), 40) << ReadFile(tree.Path("out/results.jsonl"));
}

// serve: a caller's deadline bounds the wait for a place too. With one place held by a call that runs
// a second, a call with timeout_ms 300 is OVERLOADED with when to come back.
TEST(HandlerPoolTest, AServeCallThatFindsNoPlaceBeforeItsDeadlineIsOverloadedWithRetryAfter) {
  TempTree tree;
  WriteCountingSkill(tree, "", "1");
  const std::string socket = tree.Path("serve.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket, "--handler-concurrency", "1"});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  ASSERT_TRUE(client->Send(R"({"jsonrpc":"2.0","id":1,"method":"skills.invoke","params":{"skill":"count","input":{}}})"
                           "\n"));
  // The first holds the place once its process is alive.
  for (int i = 0; i < 200 && !std::filesystem::exists(tree.Path("skills/count/alive/counts")); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(client->Send(
      R"({"jsonrpc":"2.0","id":2,"method":"skills.invoke","params":{"skill":"count","input":{},"options":{"timeout_ms":300}}})"
      "\n"));
  std::optional<json::value> read = client->ReadJson(20s);
  ASSERT_TRUE(read);
  json::value second = *read;
  if (second.at("id") == 1) {
    read = client->ReadJson(20s);
    ASSERT_TRUE(read);
    second = *read;
  }
  ASSERT_EQ(second.at("id"), 2) << json::serialize(second);
  ASSERT_TRUE(second.as_object().contains("error")) << json::serialize(second);
  EXPECT_EQ(second.at("error").at("data").at("code"), "OVERLOADED");
  const std::string message(second.at("error").at("message").as_string());
  EXPECT_TRUE(
      message.starts_with("no handler process place came free before the deadline (1 run at once: "
                          "handler_concurrency); retry in "))
      << message;
  EXPECT_GE(second.at("error").at("data").at("retry_after_ms").as_int64(), 100);
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(20s), 0) << serve.Stderr();
}

}  // namespace
}  // namespace skillrunner
