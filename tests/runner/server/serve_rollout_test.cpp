// Canary rollouts through a real serve process against a loopback OpenAI server (design.md
// §11.2): the candidate's share of calls, sticky keys, an automatic rollback that a restart
// keeps, an A/A candidate left alone, pinned versions, and the rollout commands.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "runner/eval/history/history_reader.h"
#include "runner/view/view_api.h"
#include "tests/docs/protocol_schemas.h"
#include "tests/runner/server/serve_process.h"
#include "tests/runner/server/server_fixture.h"
#include "tests/support/cli_runner.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::TempTree;

std::string Verdict(bool pass) {
  return test_support::OpenAiAnswer(std::string(R"({"criteria_results":[{"criterion_id":"a","reasoning":"checked",)") +
                                    R"("verdict":")" + (pass ? "pass" : "fail") +
                                    R"(","confidence":90}],"issues":[],"suggested_fixes":[]})");
}

// The provider: version N's prompt says "vN"; call i's answer is bad when the version's rule
// says so, and the judge fails exactly the bad answers.
class RolloutLlm {
 public:
  explicit RolloutLlm(int candidate_bad_per_100, std::chrono::milliseconds judge_delay = 0ms)
      : candidate_bad_(candidate_bad_per_100) {
    server_.SetResponder([this, judge_delay](const std::string& body) -> std::optional<test_support::ScriptedResponse> {
      if (body.find("criteria_results") != std::string::npos) {
        ++judged_;
        return test_support::ScriptedResponse{.body = Verdict(body.find("Zed-bad") == std::string::npos),
                                              .delay = judge_delay};
      }
      std::smatch m;
      if (!std::regex_search(body, m, std::regex("v([12]) Name someone for t-([0-9]+)"))) return std::nullopt;
      const int version = std::stoi(m[1]);
      const int i = std::stoi(m[2]);
      const bool bad = version == 1 ? i % 20 == 0 : (i * 37) % 100 < candidate_bad_;
      return test_support::ScriptedResponse{.body = test_support::OpenAiAnswer(std::string(R"({"name":"Zed-)") +
                                                                               (bad ? "bad" : "good") + "-v" +
                                                                               std::to_string(version) + R"("})")};
    });
  }
  std::string base_url() const { return server_.base_url(); }
  int judged() const { return judged_; }

 private:
  test_support::LoopbackServer server_;
  int candidate_bad_;
  std::atomic<int> judged_{0};
};

// A gated skill `greet` (its gate's verdicts count as review_pass) with a candidate at `traffic`;
// without `gate`, its answers are judged only by an online review the rollout asks for.
void WriteRolloutTree(const TempTree& tree, const std::string& base_url, const std::string& rollout,
                      const std::string& config = "", bool gate = true) {
  tree.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + base_url +
                                     "/v1\", api_key_env: NO_KEY_NEEDED }\n"
                                     "models:\n  m: { provider: llm, structured_output: none }\n" +
                                     config);
  tree.Write("rubrics/quality.yaml",
             "id: quality\ncriteria:\n  - { id: a, description: A real name., required: true }\n");
  const std::string body = R"(template_type: LLM_JSON_GENERATION
model: m
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [name], additionalProperties: false, properties: { name: { type: string } } }
)" + std::string(gate ? "review: { rubric: quality }\n" : "");
  tree.Write("skills/greet/skill.yaml",
             "id: greet\nversion: 1\n" + body + "prompt: { user: \"v1 Name someone for {{input.text}}\" }\n" + rollout);
  tree.Write("skills/greet/candidate.yaml",
             "id: greet\nversion: 2\n" + body + "prompt: { user: \"v2 Name someone for {{input.text}}\" }\n");
}

struct Served {
  std::string arm;
  int version = 0;
  std::string name;
};

Served Invoke(testing::SocketClient& client, int id, int i, const std::string& options) {
  auto answer = client.Call(testing::InvokeLine(id, "greet", R"({"text":"t-)" + std::to_string(i) + R"("})", options));
  const json::object& result = answer.as_object().contains("result") ? answer.at("result").as_object()
                                                                     : answer.at("error").at("data").as_object();
  Served served;
  if (const auto* arm = result.if_contains("arm")) served.arm = std::string(arm->as_string());
  if (const auto* version = result.if_contains("skill_version")) served.version = static_cast<int>(version->as_int64());
  if (const auto* output = result.if_contains("output")) served.name = std::string(output->at("name").as_string());
  return served;
}

// The tree's flags for a `skillrunner` command line.
std::string TreeArgs(const TempTree& tree) {
  std::string flags;
  for (const auto& flag : tree.TreeFlags()) flags += test_support::ShellQuote(flag) + " ";
  return flags;
}

std::string KeyOption(int i) { return R"({"routing_key":"k-)" + std::to_string(i) + R"("})"; }

json::object RolloutOf(testing::SocketClient& client) {
  auto answer = client.Call(R"({"jsonrpc":"2.0","id":99999,"method":"rollouts.list","params":{"skill":"greet"}})");
  return answer.at("result").at("rollouts").at(0).as_object();
}

// One serve of the rollout tree with its provider, for the tests that need nothing else.
struct OneServe {
  OneServe(int candidate_bad_per_100, const std::string& traffic)
      : llm(candidate_bad_per_100),
        socket(tree.Path("s.sock").string()),
        serve(std::in_place, Written(tree, llm, traffic),
              std::vector<std::string>{"--socket", socket, "--state-dir", tree.Path("state").string()}),
        client(testing::ConnectWhenReady(socket)) {}
  static const TempTree& Written(const TempTree& tree, const RolloutLlm& llm, const std::string& traffic) {
    WriteRolloutTree(tree, llm.base_url(), "rollout: { candidate: candidate.yaml, traffic: " + traffic + " }\n");
    return tree;
  }
  // Ends serve as SIGTERM does; its exit status.
  int Stop() {
    client->Close();
    serve->Signal(SIGTERM);
    return serve->Wait(10s);
  }
  RolloutLlm llm;
  TempTree tree;
  std::string socket;
  std::optional<testing::ServeProcess> serve;
  std::optional<testing::SocketClient> client;
};

TEST(ServeRolloutTest, DistinctKeysGiveTheCandidateItsShareAndAKeyKeepsItsArm) {
  OneServe one(0, "0.1");
  ASSERT_TRUE(one.client) << one.serve->Stderr();
  testing::SocketClient* client = &*one.client;
  std::vector<std::string> arms;
  int candidate = 0;
  for (int i = 0; i < 1000; ++i) {
    Served served = Invoke(*client, i + 1, i, KeyOption(i));
    ASSERT_TRUE(served.arm == "stable" || served.arm == "candidate") << i << " " << served.arm;
    EXPECT_EQ(served.version, served.arm == "candidate" ? 2 : 1);
    EXPECT_EQ(served.name.substr(served.name.size() - 2), served.arm == "candidate" ? "v2" : "v1");
    candidate += served.arm == "candidate";
    arms.push_back(served.arm);
  }
  EXPECT_GE(candidate, 70);
  EXPECT_LE(candidate, 130);
  for (int i = 0; i < 200; ++i) {  // the same keys again (another input): the same arm
    EXPECT_EQ(Invoke(*client, 2000 + i, 5000 + i, KeyOption(i)).arm, arms[i]) << "key k-" << i;
  }
  // A pinned call runs the version it names, and one the skill lacks is SKILL_NOT_FOUND.
  Served pinned = Invoke(*client, 3000, 7, R"({"version":2})");
  EXPECT_EQ(pinned.version, 2);
  EXPECT_EQ(pinned.arm, "candidate");
  auto missing = client->Call(testing::InvokeLine(3001, "greet", R"({"text":"t-1"})", R"({"version":3})"));
  EXPECT_EQ(missing.at("error").at("data").at("code"), "SKILL_NOT_FOUND");
  EXPECT_EQ(missing.at("error").at("data").at("message"), "skill \"greet\" has no version 3 (versions: 1, 2)");
  json::object rollout = RolloutOf(*client);
  EXPECT_EQ(rollout.at("state"), "running");
  EXPECT_EQ(rollout.at("traffic"), 0.1);
  // Pinned calls are not counted: 1,200 assigned calls, each judged.
  const json::object& ok = rollout.at("measures").at(0).as_object();
  EXPECT_EQ(ok.at("measure"), "ok");
  EXPECT_EQ(ok.at("stable").at("n").as_int64() + ok.at("candidate").at("n").as_int64(), 1200);
  EXPECT_EQ(one.Stop(), 0);
}

// Calls until `done` says so or `limit` calls went; how many went.
int CallUntil(testing::SocketClient& client, int first, int limit, const std::function<bool(const Served&)>& done) {
  for (int i = 0; i < limit; ++i) {
    if (done(Invoke(client, first + i, first + i, KeyOption(first + i)))) return i + 1;
  }
  return limit;
}

// Calls 50 at a time (each a key of its own), `pause` after each 50, until the rollout is rolled
// back or 2,000 calls went; how many went before it was.
int CallsUntilRolledBack(testing::SocketClient& client, std::chrono::milliseconds pause) {
  int calls = 0;
  for (; calls < 2000; calls += 50) {
    CallUntil(client, calls, 50, [](const Served&) { return false; });
    if (RolloutOf(client).at("state") == "rolled_back") break;
    std::this_thread::sleep_for(pause);
  }
  return calls;
}

TEST(ServeRolloutTest, AWorseCandidateIsRolledBackAndARestartKeepsTheRollback) {
  RolloutLlm llm(40);
  TempTree tree;
  WriteRolloutTree(tree, llm.base_url(), "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
  const std::string socket = tree.Path("s.sock").string();
  const std::string state = tree.Path("state").string();
  {
    testing::ServeProcess serve(tree, {"--socket", socket, "--state-dir", state, "--log-format", "json"});
    auto client = testing::ConnectWhenReady(socket);
    ASSERT_TRUE(client) << serve.Stderr();
    ASSERT_LT(CallsUntilRolledBack(*client, 0ms), 2000) << json::serialize(RolloutOf(*client));
    json::object rollout = RolloutOf(*client);
    EXPECT_EQ(rollout.at("traffic"), 0.0);
    EXPECT_NE(rollout.at("reason").as_string().find("the candidate is worse"), std::string::npos)
        << json::serialize(rollout);
    for (int i = 0; i < 200; ++i) {
      EXPECT_EQ(Invoke(*client, 10000 + i, 10000 + i, KeyOption(10000 + i)).arm, "stable");
    }
    client->Close();
    serve.Signal(SIGTERM);
    ASSERT_EQ(serve.Wait(10s), 0);
    EXPECT_NE(serve.Stderr().find("-> rolled_back"), std::string::npos) << serve.Stderr();
  }
  testing::ServeProcess again(tree, {"--socket", socket, "--state-dir", state}, {}, "again");
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << again.Stderr();
  for (int i = 0; i < 200; ++i) EXPECT_EQ(Invoke(*client, 20000 + i, 20000 + i, KeyOption(20000 + i)).arm, "stable");
  EXPECT_EQ(RolloutOf(*client).at("state"), "rolled_back");
  client->Close();
  again.Signal(SIGTERM);
  EXPECT_EQ(again.Wait(10s), 0);
  // promote refuses a rollout that is not ready, and the folder stays as it was.
  auto promoted = test_support::Skillrunner(
      tree.Path(""), "rollout promote greet --state-dir " + state + " " + TreeArgs(tree), "2>&1");
  EXPECT_EQ(promoted.status, 2) << promoted.out;
  EXPECT_EQ(promoted.out,
            "skillrunner rollout promote: the rollout of \"greet\" is rolled_back, not ready (`skillrunner rollout "
            "status greet` says why; --force promotes it anyway)\n");
  EXPECT_TRUE(std::filesystem::exists(tree.Path("skills/greet/candidate.yaml")));
}

TEST(ServeRolloutTest, AnAACandidateIsNotRolledBackIn2000Calls) {
  OneServe one(5, "0.5");
  ASSERT_TRUE(one.client) << one.serve->Stderr();
  int candidate = 0;
  CallUntil(*one.client, 0, 2000, [&](const Served& served) {
    candidate += served.arm == "candidate";
    return false;
  });
  json::object rollout = RolloutOf(*one.client);
  EXPECT_NE(rollout.at("state"), "rolled_back") << json::serialize(rollout);
  EXPECT_GT(candidate, 800);
  EXPECT_EQ(one.Stop(), 0);
}

// Two replicas sharing Redis: counts are summed there, one replica decides, and the other stops
// sending calls to the candidate within a second of the decision.
TEST(ServeRolloutTest, TwoReplicasSharingRedisBothStopSendingToARolledBackCandidateWithinASecond) {
  TempTree tree;
  test_support::RedisServer redis(tree.Path("redis"));
  ASSERT_TRUE(redis.started()) << redis.why();
  RolloutLlm llm(40);
  WriteRolloutTree(tree, llm.base_url(), "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n",
                   "state:\n  redis: " + redis.url() + "\n");
  testing::ServeProcess a(tree, {"--socket", tree.Path("a.sock").string()}, {}, "a");
  testing::ServeProcess b(tree, {"--socket", tree.Path("b.sock").string()}, {}, "b");
  auto client_a = testing::ConnectWhenReady(tree.Path("a.sock").string());
  auto client_b = testing::ConnectWhenReady(tree.Path("b.sock").string());
  ASSERT_TRUE(client_a && client_b) << a.Stderr() << b.Stderr();
  std::this_thread::sleep_for(1200ms);  // until each has heard from Redis (before that: stable only)
  int calls = 0;
  testing::SocketClient* decided_by = nullptr;
  for (; calls < 2000 && decided_by == nullptr; calls += 20) {
    for (int i = 0; i < 20; ++i) {
      Invoke(i % 2 ? *client_b : *client_a, calls + i + 1, calls + i, KeyOption(calls + i));
    }
    for (auto* client : {&*client_a, &*client_b}) {
      if (RolloutOf(*client).at("state") == "rolled_back") decided_by = client;
    }
  }
  ASSERT_NE(decided_by, nullptr) << json::serialize(RolloutOf(*client_a));
  testing::SocketClient& other = decided_by == &*client_a ? *client_b : *client_a;
  const auto seen = std::chrono::steady_clock::now();
  while (RolloutOf(other).at("state") != "rolled_back" && std::chrono::steady_clock::now() - seen < 3s) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_LE(std::chrono::steady_clock::now() - seen, 1s);
  // Both count the same calls once each has sent its own and read the other's: the sums are Redis's.
  std::this_thread::sleep_for(1200ms);
  EXPECT_EQ(RolloutOf(*client_a).at("measures"), RolloutOf(*client_b).at("measures"));
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(Invoke(i % 2 ? *client_b : *client_a, 50000 + i, 50000 + i, KeyOption(50000 + i)).arm, "stable");
  }
  // The state is in Redis, where `rollout status` reads it.
  auto status = test_support::Skillrunner(tree.Path(""), "rollout status greet " + TreeArgs(tree), "2>&1");
  EXPECT_EQ(status.status, 0) << status.out;
  EXPECT_NE(status.out.find("greet: version 1 -> 2, rolled_back, traffic 0% (step 0)"), std::string::npos)
      << status.out;
  client_a->Close();
  client_b->Close();
  a.Signal(SIGTERM);
  b.Signal(SIGTERM);
  EXPECT_EQ(a.Wait(10s), 0);
  EXPECT_EQ(b.Wait(10s), 0);
}

// A rollout at traffic 0.5 whose every answer is judged online, one at a time, on a queue of `queue`.
std::string JudgedRollout(int queue) {
  return "rollout:\n  candidate: candidate.yaml\n  traffic: 0.5\n"
         "  review: { rubric: quality, sample: 1.0, queue: " +
         std::to_string(queue) + ", concurrency: 1 }\n";
}

// `n` pipelined calls of greet, each with a routing key of its own.
std::string DistinctKeyCalls(int n) {
  std::string lines;
  for (int i = 0; i < n; ++i) {
    lines += testing::InvokeLine(i + 1, "greet", R"({"text":"t-)" + std::to_string(i) + R"("})", KeyOption(i));
  }
  return lines;
}

// The online review judges answered calls after their answers went: 40 calls pipelined are all
// answered while a slow judge (300 ms, one at a time) has barely begun; a full queue drops the
// rest, counted, and every verdict counts as review_pass.
TEST(ServeRolloutTest, TheOnlineReviewJudgesAfterTheAnswerAndAFullQueueDropsAndCounts) {
  RolloutLlm llm(0, 300ms);
  TempTree tree;
  WriteRolloutTree(tree, llm.base_url(), JudgedRollout(5), "", false);
  const std::string socket = tree.Path("s.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket, "--state-dir", tree.Path("state").string()});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  ASSERT_TRUE(client->Send(DistinctKeyCalls(40)));
  for (int i = 0; i < 40; ++i) {
    auto answer = client->ReadJson();
    ASSERT_TRUE(answer && answer->as_object().contains("result")) << (answer ? json::serialize(*answer) : "none");
    EXPECT_FALSE(answer->at("result").as_object().contains("review"));  // judged later, not on the call
  }
  EXPECT_LE(llm.judged(), 3);  // the answers did not wait for the judge
  // Every sample is judged or counted as dropped, 300 ms a verdict; judging runs at idle priority,
  // so on a busy machine it may start late: wait for it (bounded) rather than a fixed time.
  auto counter = [](const std::string& prometheus, const std::string& name) {
    const std::size_t at = prometheus.find(name);
    return at == std::string::npos ? -1 : std::stoi(prometheus.substr(at + name.size()));
  };
  const std::string dropped = "skillrunner_rollout_samples_dropped_total{skill=\"greet\",reason=\"queue_full\"} ";
  const std::string judged_total = "skillrunner_rollout_judged_total{skill=\"greet\"} ";
  std::string prometheus;
  for (auto give_up = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < give_up;) {
    auto metrics = client->Call(R"({"jsonrpc":"2.0","id":"m","method":"metrics"})");
    prometheus = std::string(metrics.at("result").at("prometheus").as_string());
    if (counter(prometheus, dropped) + counter(prometheus, judged_total) == 40) break;
    std::this_thread::sleep_for(100ms);
  }
  const int judged = llm.judged();
  EXPECT_GE(judged, 5);  // the five queued (and the first, when it began before the queue filled)
  EXPECT_LE(judged, 10);
  EXPECT_EQ(counter(prometheus, judged_total), judged) << prometheus;
  EXPECT_EQ(counter(prometheus, dropped), 40 - judged) << prometheus;  // every sample judged or counted
  json::object rollout = RolloutOf(*client);
  const json::object& review = rollout.at("measures").at(1).as_object();
  EXPECT_EQ(review.at("measure"), "review_pass");
  EXPECT_EQ(review.at("stable").at("n").as_int64() + review.at("candidate").at("n").as_int64(), judged);
  EXPECT_NE(prometheus.find("skillrunner_rollout_traffic_ratio{skill=\"greet\"} 0.5\n"), std::string::npos);
  client->Close();
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
}

// The scheduling policy of each of `pid`'s threads (field 41 of /proc/PID/task/TID/stat; 5 is SCHED_IDLE).
std::vector<int> ThreadPolicies(pid_t pid) {
  std::vector<int> policies;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "PID (comm) ": field 3 on
    std::string field;
    for (int i = 3; i <= 41 && fields >> field; ++i) {
      if (i == 41) policies.push_back(std::stoi(field));
    }
  }
  return policies;
}

// Judging never takes CPU a call wants: it runs on a thread at idle priority. And a serve told
// to stop does not judge what is still queued: it exits once the judging under way is done.
TEST(ServeRolloutTest, JudgingRunsAtIdlePriorityAndAStoppedServeLeavesQueuedSamplesUnjudged) {
  RolloutLlm llm(0, 300ms);
  TempTree tree;
  WriteRolloutTree(tree, llm.base_url(), JudgedRollout(30), "", false);
  const std::string socket = tree.Path("s.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket, "--state-dir", tree.Path("state").string()});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  ASSERT_TRUE(client->Send(DistinctKeyCalls(30)));
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(client->ReadJson());
  const std::vector<int> policies = ThreadPolicies(serve.pid());
  EXPECT_EQ(std::count(policies.begin(), policies.end(), SCHED_IDLE), 1) << ::testing::PrintToString(policies);
  client->Close();
  serve.Signal(SIGTERM);
  // 30 queued at 300 ms a verdict would be 9 s; one judging under way is at most 300 ms.
  EXPECT_EQ(serve.Wait(5s), 0) << serve.Stderr();
  EXPECT_LE(llm.judged(), 3);
}

// design.md §11.3: with `history:` in the config, serve records each decision, snapshots of the
// counts and each judged sample, and the viewer's rollouts answer shows them: the arms, each
// measure's confidence sequence over time, the rollback.
TEST(ServeRolloutTest, WithAHistoryTheRolloutsDecisionsSnapshotsAndSamplesAreRecordedForTheViewer) {
  RolloutLlm llm(40);
  TempTree tree;
  const std::string history = tree.Path("eval-history.sqlite").string();
  WriteRolloutTree(tree, llm.base_url(), JudgedRollout(1000), "history: \"" + history + "\"\n", false);
  const std::string socket = tree.Path("s.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket, "--state-dir", tree.Path("state").string()});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  // Judging runs at idle priority: each 50 calls wait a little for it to catch up.
  ASSERT_LT(CallsUntilRolledBack(*client, 200ms), 2000) << json::serialize(RolloutOf(*client));
  client->Close();
  serve.Signal(SIGTERM);
  ASSERT_EQ(serve.Wait(10s), 0) << serve.Stderr();

  auto reader = eval::HistoryReader::Open(history);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  view::ViewApi api(**reader);
  view::ApiAnswer answer = api.Get({"rollouts"}, {});
  ASSERT_EQ(answer.status, 200) << json::serialize(answer.body);
  EXPECT_EQ(testing::SchemaViolations("view/rollouts.schema.json", answer.body), "");
  ASSERT_EQ(answer.body.at("rollouts").as_array().size(), 1u) << json::serialize(answer.body);
  const json::object& rollout = answer.body.at("rollouts").at(0).as_object();
  EXPECT_EQ(rollout.at("skill"), "greet");
  EXPECT_EQ(rollout.at("stable_version"), 1);
  EXPECT_EQ(rollout.at("candidate_version"), 2);
  EXPECT_EQ(rollout.at("state"), "rolled_back");  // serve's last snapshot, written as it stopped
  const json::array& decisions = rollout.at("decisions").as_array();
  ASSERT_FALSE(decisions.empty());
  EXPECT_EQ(decisions.back().at("state"), "rolled_back");
  EXPECT_NE(decisions.back().at("reason").as_string().find("the candidate is worse"), std::string::npos);
  const json::object& candidate = rollout.at("arms").at("candidate").as_object();
  EXPECT_GT(candidate.at("samples").as_int64(), 0);
  EXPECT_LT(candidate.at("passed").as_int64(), candidate.at("samples").as_int64());  // 40% of its answers fail
  // The review's sequence ends below 0: the candidate is worse.
  for (const json::value& measure : rollout.at("measures").as_array()) {
    if (measure.at("measure") != "review_pass") continue;
    const json::object& last = measure.at("points").as_array().back().as_object();
    EXPECT_LT(last.at("high").as_double(), 0.0) << json::serialize(measure);
  }
}

// A history serve cannot open is said once, and serve goes on: a rollout never depends on its record.
TEST(ServeRolloutTest, AHistoryThatCannotBeOpenedIsSaidAndServeGoesOn) {
  RolloutLlm llm(0);
  TempTree tree;
  WriteRolloutTree(tree, llm.base_url(), "rollout: { candidate: candidate.yaml, traffic: 0.5 }\n",
                   "history: /nonexistent/folder/eval-history.sqlite\n");
  const std::string socket = tree.Path("s.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket, "--state-dir", tree.Path("state").string()});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  EXPECT_EQ(Invoke(*client, 1, 1, KeyOption(1)).name.rfind("Zed-good", 0), 0u);
  client->Close();
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0);
  EXPECT_NE(serve.Stderr().find("skillrunner serve: rollouts are not recorded in the history: cannot open eval "
                                "history /nonexistent/folder/eval-history.sqlite: folder /nonexistent/folder does "
                                "not exist\n"),
            std::string::npos)
      << serve.Stderr();
}

}  // namespace
}  // namespace skillrunner
