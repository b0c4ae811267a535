// What a client of a real `skillrunner serve` sees at the edges of the
// protocol: an attempt cut by the invocation's deadline, `$/cancel` without
// an id, OVERLOADED's retry_after_ms, and partials coalesced per interval.
// The provider is a loopback OpenAI server (whole answers or SSE streams).
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "tests/runner/server/serve_process.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/sse_chunks.h"
#include "tests/support/sse_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::ConnectWhenReady;
using testing::ServeProcess;
using testing::SocketClient;

constexpr const char* kTriageAnswer = R"({"category":"bug","title":"Crash"})";

// A skills.invoke of the triage skill (without the line's newline).
std::string Invoke(int id, const std::string& options = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"skills.invoke","params":{"skill":"triage","input":{"text":"it crashes"},"options":)" + options +
         "}}";
}

std::string InvokeLine(int id, const std::string& options = "{}") { return Invoke(id, options) + "\n"; }

// A tree whose triage skill runs on an OpenAI-compatible server at `base_url`.
void WriteTree(testing::TempTree& tree, const std::string& base_url) {
  tree.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + base_url +
                                     "/v1\" }\nmodels:\n  m-loop: { provider: llm, structured_output: none }\n");
  tree.Write("skills/triage/skill.yaml", test_support::kStreamedTriageSkill);
  tree.Write("rubrics/.keep", "");
}

// Reads lines until the answer with `id` (notifications before it are kept).
std::vector<json::value> ReadUntil(SocketClient& client, int id) {
  std::vector<json::value> lines;
  while (auto line = client.ReadJson(15s)) {
    lines.push_back(*line);
    const json::object* object = line->if_object();
    if (object != nullptr && object->contains("id") && object->at("id") == json::value(id)) break;
  }
  return lines;
}

// A tree whose triage skill runs on `Provider` (a loopback OpenAI server:
// whole answers or SSE streams), and the socket serve listens on.
template <class Provider>
class ServeOn : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteTree(tree_, provider_.base_url());
    socket_ = tree_.Path("s.sock").string();
  }
  std::optional<SocketClient> Connect() { return ConnectWhenReady(socket_); }

  Provider provider_;
  testing::TempTree tree_;
  std::string socket_;
};

class ServeProtocolTest : public ServeOn<test_support::LoopbackServer> {};

TEST_F(ServeProtocolTest, AnAttemptCutByTheInvocationDeadlineIsATimeout) {
  provider_.SetDefault({.body = test_support::OpenAiAnswer(kTriageAnswer), .delay = 4000ms});
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = Connect();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(InvokeLine(1, R"({"timeout_ms":700})")));
  std::vector<json::value> lines = ReadUntil(*client, 1);
  ASSERT_EQ(lines.size(), 1u);
  const json::value& answer = lines.back();
  EXPECT_EQ(answer.at_pointer("/error/data/code"), "TIMEOUT") << json::serialize(answer);
  EXPECT_EQ(answer.at_pointer("/error/message"), "invocation timed out after 700 ms") << json::serialize(answer);
  const json::array& attempts = answer.at_pointer("/error/data/attempts").as_array();
  ASSERT_EQ(attempts.size(), 1u) << json::serialize(answer);
  EXPECT_EQ(attempts.back().at("kind"), "timeout") << json::serialize(answer);
  EXPECT_EQ(provider_.request_count(), 1u);
}

TEST_F(ServeProtocolTest, CancelWithoutAnIdIsInvalidParams) {
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = Connect();
  ASSERT_TRUE(client);
  json::value missing = client->Call(R"({"jsonrpc":"2.0","id":1,"method":"$/cancel","params":{}})");
  EXPECT_EQ(missing, json::parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,
      "message":"Invalid params: /id: missing: the id of the skills.invoke request to cancel",
      "data":{"errors":[{"path":"/id","message":"missing: the id of the skills.invoke request to cancel"}]}}})"));
  json::value none = client->Call(R"({"jsonrpc":"2.0","id":2,"method":"$/cancel"})");
  EXPECT_EQ(none.at_pointer("/error/code"), -32602) << json::serialize(none);
  EXPECT_EQ(none.at_pointer("/error/data/errors/0/path"), "") << json::serialize(none);
  json::value object_id = client->Call(R"({"jsonrpc":"2.0","id":3,"method":"$/cancel","params":{"id":{"n":1}}})");
  EXPECT_EQ(object_id.at_pointer("/error/message"),
            "Invalid params: /id: expected a string, a number or null (a JSON-RPC id)")
      << json::serialize(object_id);
  // Still a well-formed cancel of nothing in flight.
  json::value unknown = client->Call(R"({"jsonrpc":"2.0","id":4,"method":"$/cancel","params":{"id":99}})");
  EXPECT_EQ(unknown.at("result"), json::parse(R"({"cancelled":false})"));
}

// OVERLOADED at the in-flight bound: before any invocation has finished,
// 1,000 ms; then about one invocation's time (the median of recent ones).
TEST_F(ServeProtocolTest, OverloadedAtTheInFlightBoundSaysRetryAfterTheRecentMedian) {
  ServeProcess serve(tree_, {"--socket", socket_, "--max-in-flight-per-connection", "1"});
  auto client = Connect();
  ASSERT_TRUE(client);
  auto overloaded_retry_after = [&](int slow_id, int refused_id) -> std::int64_t {
    provider_.Enqueue({.body = test_support::OpenAiAnswer(kTriageAnswer), .delay = 600ms});
    EXPECT_TRUE(client->Send(InvokeLine(slow_id)));
    std::this_thread::sleep_for(100ms);  // the slow one is in flight
    json::value refused = client->Call(Invoke(refused_id));
    EXPECT_EQ(refused.at_pointer("/error/data/code"), "OVERLOADED") << json::serialize(refused);
    std::vector<json::value> rest = ReadUntil(*client, slow_id);
    EXPECT_EQ(rest.back().at_pointer("/result/output"), json::parse(kTriageAnswer));
    return refused.at_pointer("/error/data/retry_after_ms").as_int64();
  };
  EXPECT_EQ(overloaded_retry_after(1, 2), 1000);
  for (int id : {3, 4}) {
    provider_.Enqueue({.body = test_support::OpenAiAnswer(kTriageAnswer), .delay = 100ms});
    json::value quick = client->Call(Invoke(id));
    EXPECT_EQ(quick.at_pointer("/result/output"), json::parse(kTriageAnswer)) << json::serialize(quick);
  }
  // Finished: ~600, ~100, ~100 ms; the median is one of the quick ones.
  const std::int64_t median = overloaded_retry_after(5, 6);
  EXPECT_GE(median, 100);
  EXPECT_LT(median, 600);
}

TEST_F(ServeProtocolTest, OverloadedWhileDrainingSaysRetryAfterTheDrainTimeLeft) {
  ServeProcess serve(tree_, {"--socket", socket_, "--drain-timeout-ms", "4000"});
  auto client = Connect();
  ASSERT_TRUE(client);
  provider_.Enqueue({.body = test_support::OpenAiAnswer(kTriageAnswer), .delay = 1500ms});
  ASSERT_TRUE(client->Send(InvokeLine(1)));
  std::this_thread::sleep_for(100ms);
  serve.Signal(SIGTERM);
  // Once health says so, the server drains (the connection stays open for the answer in flight).
  for (int id = 100; id < 200; ++id) {
    json::value health = client->Call(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"health"})");
    if (health.at_pointer("/result/status") == "draining") break;
    std::this_thread::sleep_for(10ms);
  }
  json::value refused = client->Call(Invoke(2));
  EXPECT_EQ(refused.at_pointer("/error/data/code"), "OVERLOADED") << json::serialize(refused);
  EXPECT_EQ(refused.at_pointer("/error/message"), "the server is shutting down and takes no new invocations");
  const std::int64_t retry_after = refused.at_pointer("/error/data/retry_after_ms").as_int64();
  EXPECT_LE(retry_after, 4000);
  EXPECT_GE(retry_after, 2500);  // asked within a second or so of the signal
  std::vector<json::value> rest = ReadUntil(*client, 1);
  EXPECT_EQ(rest.back().at_pointer("/result/output"), json::parse(kTriageAnswer));
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Stderr();
}

// The streamed answer: 400 one-character events.
std::vector<std::string> OneCharacterPieces() {
  std::string text = R"({"category":"bug","title":")" + std::string(369, 'x') + "\"}";
  std::vector<std::string> pieces;
  for (char c : text) pieces.emplace_back(1, c);
  return pieces;
}

class ServeCoalescingTest : public ServeOn<test_support::SseServer> {
 protected:
  // The partials of one streamed invocation with `options`, the stream
  // written one event per piece with `gap` after each.
  std::vector<json::value> Partials(const std::string& options, std::chrono::milliseconds gap,
                                    std::chrono::milliseconds& took) {
    // About one event per write (the events are of one size, give or take an escape).
    test_support::SseScript script = test_support::Streamed(test_support::OpenAiStream(OneCharacterPieces()),
                                                            test_support::OpenAiContentEvent("x").size());
    script.piece_gap = gap;
    provider_.Enqueue(std::move(script));
    ServeProcess serve(tree_, {"--socket", socket_});
    auto client = Connect();
    if (!client) return {};
    const auto start = std::chrono::steady_clock::now();
    client->Send(InvokeLine(1, options));
    std::vector<json::value> lines = ReadUntil(*client, 1);
    took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    EXPECT_EQ(lines.back().at_pointer("/result/output/title"), json::value(std::string(369, 'x')));
    lines.pop_back();
    return lines;
  }
};

TEST_F(ServeCoalescingTest, PartialsComeAtMostOncePerIntervalAndTheLastIsAlwaysSent) {
  std::chrono::milliseconds took{};
  std::vector<json::value> every = Partials(R"({"stream":true,"partial_interval_ms":0})", 0ms, took);
  // Every change of the parsed value (a quote or a colon alone changes nothing).
  EXPECT_GT(every.size(), 370u);
  std::vector<json::value> paced = Partials(R"({"stream":true})", 2ms, took);
  ASSERT_GE(paced.size(), 3u);  // the first, some sent by the timer, the last
  // At most one per 25 ms since the first, plus the one held back at the end.
  EXPECT_LE(paced.size(), 2 + static_cast<std::size_t>(took.count() / 25)) << took.count() << " ms";
  EXPECT_LT(paced.size(), every.size() / 4);
  std::size_t shown = 0;
  for (const json::value& note : paced) {
    EXPECT_EQ(note.at("method"), "skills.partial");
    const json::value* title = note.at("params").at("value").as_object().if_contains("title");
    const std::size_t length = title != nullptr ? title->as_string().size() : 0;
    EXPECT_GE(length, shown);  // always the newest value
    shown = length;
  }
  EXPECT_EQ(paced.back().at("params").at("value"),
            json::parse(R"({"category":"bug","title":")" + std::string(369, 'x') + "\"}"));
}

}  // namespace
}  // namespace skillrunner
