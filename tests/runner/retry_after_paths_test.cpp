// A server-given delay is a floor on every path (design.md §12.0), in real time: `run`, `eval` and
// `serve` as processes, and the shared limiter over a real Redis in-process. A loopback OpenAI server
// refuses the first request with `retry-after-ms: 400` (or `Retry-After: 1`) and stamps when each
// arrives: the retry comes no sooner than the delay (and not much later: the spread is at most a
// quarter of it), and the answer's `waited_ms` says at least as much.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "services/providers/limited_provider.h"
#include "services/providers/openai_provider.h"
#include "services/providers/retrying_provider.h"
#include "services/state/shared_limiter.h"
#include "services/state/shared_state.h"
#include "tests/runner/name_skill_tree.h"
#include "tests/runner/server/serve_process.h"
#include "tests/support/child_process.h"
#include "tests/support/cli_runner.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using std::chrono::milliseconds;
using test_support::LoopbackServer;
using testing::ReadFile;
using testing::TempTree;

// The refusal with its header, then answers.
void ScriptRefusal(LoopbackServer& llm, std::pair<std::string, std::string> header) {
  llm.SetDefault({.body = test_support::OpenAiAnswer(R"({"name":"Ada"})")});
  llm.Enqueue({.status = 429,
               .headers = {std::move(header)},
               .body = test_support::OpenAiError("Rate limit reached for requests", "requests")});
}

// The gap the server saw between its first two requests.
milliseconds Gap(const LoopbackServer& llm) {
  auto requests = llm.requests();
  if (requests.size() < 2) return milliseconds(-1);
  return std::chrono::duration_cast<milliseconds>(requests[1].arrived - requests[0].arrived);
}

// The attempts of an invocation's answer: the refusal waited out, then the answer after it.
void ExpectWaitedOut(const json::value& attempts, milliseconds delay) {
  ASSERT_TRUE(attempts.is_array()) << json::serialize(attempts);
  ASSERT_EQ(attempts.as_array().size(), 2u) << json::serialize(attempts);
  EXPECT_EQ(attempts.at(0).at("http_status"), 429);
  EXPECT_GE(attempts.at(0).at("delay_ms").as_int64(), delay.count());
  EXPECT_GE(attempts.at(1).at("waited_ms").as_int64(), delay.count());
}

constexpr milliseconds kDelay{400};
// The spread (a quarter of 400 ms), a process's start and a busy machine's scheduling.
constexpr milliseconds kLate{kDelay + 100ms + 1500ms};

TEST(RetryAfterPathsTest, RunWaitsOutRetryAfterMs) {
  TempTree tree;
  LoopbackServer llm;
  ScriptRefusal(llm, {"retry-after-ms", "400"});
  testing::WriteNameSkillTree(tree, llm.base_url());
  std::string flags;
  for (const std::string& flag : tree.TreeFlags()) flags += test_support::ShellQuote(flag) + " ";
  auto result = test_support::Skillrunner(tree.root(), "run name --input '{}' " + flags, "2>/dev/null",
                                          "TEST_LLM_KEY=sk-test-key");
  ASSERT_EQ(result.status, 0) << result.out;
  EXPECT_GE(Gap(llm), kDelay);
  EXPECT_LE(Gap(llm), kLate);
  ExpectWaitedOut(json::parse(result.out).at("attempts"), kDelay);
}

TEST(RetryAfterPathsTest, EvalWaitsOutRetryAfterSeconds) {
  TempTree tree;
  LoopbackServer llm;
  ScriptRefusal(llm, {"retry-after", "1"});
  testing::WriteNameSkillTree(tree, llm.base_url());
  tree.Write("skills/name/cases.jsonl", "{\"id\": \"c1\", \"input\": {}}\n");
  tree.Write("suite.yaml", "id: floor\nskills:\n  - skill: name\n");
  std::vector<std::string> args{"eval", tree.Path("suite.yaml").string(), "--out", tree.Path("out").string()};
  for (const std::string& flag : tree.TreeFlags()) args.push_back(flag);
  test_support::ChildProcess eval(SKILLRUNNER_BINARY, args,
                                  test_support::CleanEnvironment({"TEST_LLM_KEY=sk-test-key"}), {}, {},
                                  tree.Path("eval.stderr"));
  ASSERT_EQ(eval.Wait(60s), 0) << ReadFile(tree.Path("eval.stderr"));
  EXPECT_GE(Gap(llm), 1000ms);
  EXPECT_LE(Gap(llm), 1000ms + 250ms + 1500ms);
  json::value record = json::parse(ReadFile(tree.Path("out/results.jsonl")));
  ExpectWaitedOut(record.at_pointer("/result/attempts"), 1000ms);
}

TEST(RetryAfterPathsTest, ServeWaitsOutRetryAfterMs) {
  TempTree tree;
  LoopbackServer llm;
  ScriptRefusal(llm, {"retry-after-ms", "400"});
  testing::WriteNameSkillTree(tree, llm.base_url());
  const std::string socket = tree.Path("serve.sock").string();
  testing::ServeProcess serve(tree, {"--socket", socket}, {"TEST_LLM_KEY=sk-test-key"});
  auto client = testing::ConnectWhenReady(socket);
  ASSERT_TRUE(client) << serve.Stderr();
  json::value answer =
      client->Call(R"({"jsonrpc":"2.0","id":1,"method":"skills.invoke","params":{"skill":"name","input":{}}})"
                   "\n");
  ASSERT_TRUE(answer.as_object().contains("result")) << json::serialize(answer);
  EXPECT_GE(Gap(llm), kDelay);
  EXPECT_LE(Gap(llm), kLate);
  ExpectWaitedOut(answer.at("result").at("attempts"), kDelay);
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(20s), 0) << serve.Stderr();
}

std::optional<std::string> TestEnv(std::string_view name) {
  if (name == "OPENAI_API_KEY") return std::string(test_support::kTestApiKey);
  return std::nullopt;
}

// The shared limiter paces the retry through Redis: it still comes no sooner than the delay, and
// Redis holds the pace's rises until then.
TEST(RetryAfterPathsTest, TheSharedLimiterWaitsOutRetryAfterMsAndHoldsItsRisesUntilThen) {
  TempTree tree;
  test_support::RedisServer redis(tree.Path("redis"));
  ASSERT_TRUE(redis.started()) << redis.why();
  LoopbackServer llm;
  ScriptRefusal(llm, {"retry-after-ms", "400"});
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread thread([&io] { io.run(); });
  state::SharedStateOptions options;
  auto url = state::ParseRedisUrl(redis.url());
  ASSERT_TRUE(url.has_value()) << url.error().message;
  options.url = *url;
  options.timeout = 2s;
  auto shared = state::SharedState::Start(io.get_executor(), options, RealClock());
  auto limiter = std::make_shared<state::SharedLimiter>(shared, "openai", state::RateLimit{}, RealClock());
  providers::OpenAiOptions openai;
  openai.base_url = llm.base_url() + "/v1";
  auto provider = std::make_shared<providers::OpenAiProvider>(openai, http::MakeHttpClient(io.get_executor()), TestEnv);
  providers::LimitedProvider limited(provider, limiter, RealClock());
  providers::RetryingProvider retrying(limited);
  providers::TransientRetryPolicy policy;
  InvocationContext ctx("s", InvocationOptions{}, RealClock().Now() + 60s, RealClock());
  providers::ChatRequest request;
  request.model = "gpt-test";
  request.messages = {{"user", "Say a name."}};
  request.max_output_tokens = 64;
  auto future = boost::asio::co_spawn(io, retrying.Chat(request, policy, ctx), boost::asio::use_future);
  const bool answered = future.wait_for(30s) == std::future_status::ready;
  // The refusal's report reaches Redis on its own (reports are not awaited): its hold, once there.
  std::optional<std::string> hold;
  for (auto deadline = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < deadline;) {
    hold = redis.Command({"HGET", "skillrunner:limit:openai", "hold"});
    if (hold && !hold->empty() && *hold != "(nil)") break;
    std::this_thread::sleep_for(10ms);
  }
  auto stop = [&] {
    boost::asio::post(io, [shared] { shared->Stop(); });
    work.reset();
    std::this_thread::sleep_for(100ms);
    io.stop();
    thread.join();
  };
  if (!answered) {
    stop();
    FAIL() << "no answer in 30 s";
  }
  Result<providers::ChatResponse> result = future.get();
  stop();
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_GE(Gap(llm), kDelay);
  EXPECT_LE(Gap(llm), kLate);
  EXPECT_GE(result->timing.waited_ms, kDelay.count());
  ASSERT_TRUE(hold && !hold->empty() && *hold != "(nil)");  // the refusal's time plus 400 ms, on Redis's clock
}

}  // namespace
}  // namespace skillrunner
