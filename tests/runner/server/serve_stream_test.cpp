// Streaming over the socket and `run --stream` (design.md §10.7), with the real
// program, a real socket client and a loopback SSE server as the provider.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <thread>

#include "tests/runner/server/serve_process.h"
#include "tests/support/cli_runner.h"
#include "tests/support/sse_chunks.h"
#include "tests/support/sse_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using test_support::OpenAiStream;
using test_support::Streamed;
using testing::ConnectWhenReady;
using testing::ServeProcess;
using testing::SocketClient;

const std::vector<std::string> kValid = {"{\"category\":\"b", "ug\",\"title\":\"Crash", "\"}"};
constexpr const char* kInvoke =
    R"({"jsonrpc":"2.0","id":7,"method":"skills.invoke","params":{"skill":"triage","input":{"text":"it crashes"},"options":{"stream":true}}})"
    "\n";
// The same with every partial sent (partial_interval_ms 0): for the tests of an exact sequence.
constexpr const char* kInvokeEvery =
    R"({"jsonrpc":"2.0","id":7,"method":"skills.invoke","params":{"skill":"triage","input":{"text":"it crashes"},"options":{"stream":true,"partial_interval_ms":0}}})"
    "\n";

class ServeStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + sse_.base_url() +
                                        "/v1\" }\nmodels:\n  m-loop: { provider: llm, structured_output: none }\n");
    tree_.Write("skills/triage/skill.yaml", test_support::kStreamedTriageSkill);
    tree_.Write("skills/echoer/skill.yaml",
                "id: echoer\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    tree_.Write("rubrics/.keep", "");
    socket_ = tree_.Path("s.sock").string();
  }

  // The lines up to and including the answer with id 7.
  std::vector<json::value> ReadUntilAnswer(SocketClient& client) {
    std::vector<json::value> lines;
    while (auto line = client.ReadJson(10s)) {
      lines.push_back(*line);
      if (line->is_object() && line->as_object().contains("id")) break;
    }
    return lines;
  }

  // "method attempt" of each notification among `lines`, in order.
  static std::vector<std::string> Methods(const std::vector<json::value>& lines) {
    std::vector<std::string> methods;
    for (const json::value& line : lines) {
      if (!line.as_object().contains("method")) continue;
      methods.push_back(std::string(line.at("method").as_string()) + " " +
                        json::serialize(line.at("params").at("attempt")));
    }
    return methods;
  }

  test_support::SseServer sse_;
  testing::TempTree tree_;
  std::string socket_;
};

TEST_F(ServeStreamTest, StreamedInvokeSendsPartialNotificationsThenTheUsualAnswer) {
  sse_.Enqueue(Streamed(OpenAiStream(kValid), 3));
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(kInvoke));
  std::vector<json::value> lines = ReadUntilAnswer(*client);
  ASSERT_GE(lines.size(), 2u);
  const json::value& answer = lines.back();
  EXPECT_EQ(answer.at("id"), json::value(7));
  EXPECT_EQ(answer.at("result").at("output"), json::parse(R"({"category":"bug","title":"Crash"})"));
  std::vector<std::string> shown;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const json::object& note = lines[i].as_object();
    EXPECT_FALSE(note.contains("id"));
    EXPECT_EQ(note.at("jsonrpc"), json::value("2.0"));
    EXPECT_EQ(note.at("method"), json::value("skills.partial"));
    EXPECT_EQ(note.at("params").at("id"), json::value(7));
    EXPECT_EQ(note.at("params").at("attempt"), json::value(1));
    shown.push_back(json::serialize(note.at("params").at("value")));
  }
  EXPECT_EQ(shown.front(), R"({"category":"b"})");
  EXPECT_EQ(shown.back(), R"({"category":"bug","title":"Crash"})");
  EXPECT_EQ(lines[lines.size() - 2].at("params").at("complete"), json::parse(R"(["/category","/title",""])"));
}

TEST_F(ServeStreamTest, AnAbortedAttemptIsFollowedByAResetThenTheRetrysPartials) {
  const std::string doomed = OpenAiStream({"{\"category\":\"question\",", "\"title\":\"Why\"}"});
  sse_.Enqueue(Streamed(doomed, 4, doomed.find("\\\"title")));
  sse_.Enqueue(Streamed(OpenAiStream(kValid)));
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(kInvokeEvery));
  std::vector<json::value> lines = ReadUntilAnswer(*client);
  EXPECT_EQ(Methods(lines), (std::vector<std::string>{"skills.partial 1", "skills.reset 1", "skills.partial 2",
                                                      "skills.partial 2", "skills.partial 2"}));
  const json::value& answer = lines.back();
  EXPECT_EQ(answer.at("result").at("output"), json::parse(R"({"category":"bug","title":"Crash"})"));
  EXPECT_EQ(answer.at("result").at("attempts").at(0).at("aborted_early"), json::value(true));
  EXPECT_EQ(answer.at("result").at("attempts").at(0).at("kind"), json::value("validation"));
  EXPECT_TRUE(sse_.WaitForHangUps(1));
}

// The reset goes out when the attempt is abandoned: here the retry of an answer aborted for its
// schema meets a 503 and its 2 s backoff, and the client drops the dead partial at once, before
// the provider sees the request after the backoff (it came when that request's text did).
TEST_F(ServeStreamTest, TheResetComesWhenTheAttemptIsAbandonedNotAfterTheNextBackoff) {
  const std::string doomed = OpenAiStream({"{\"category\":\"question\",", "\"title\":\"Why\"}"});
  sse_.Enqueue(Streamed(doomed, 4, doomed.find("\\\"title")));
  sse_.Enqueue(test_support::JsonAnswer(R"({"error":{"message":"overloaded","type":"server_error"}})", 503));
  sse_.Enqueue(Streamed(OpenAiStream(kValid)));
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(kInvokeEvery));
  std::vector<std::string> methods;
  std::size_t requests_at_reset = 0;
  json::value answer;
  while (auto line = client->ReadJson(15s)) {
    if (line->as_object().contains("id")) {
      answer = *line;
      break;
    }
    const std::string method(line->at("method").as_string());
    if (method == "skills.reset") requests_at_reset = sse_.request_bodies().size();
    methods.push_back(method + " " + json::serialize(line->at("params").at("attempt")));
  }
  EXPECT_EQ(methods, (std::vector<std::string>{"skills.partial 1", "skills.reset 1", "skills.partial 3",
                                               "skills.partial 3", "skills.partial 3"}));
  EXPECT_GE(requests_at_reset, 1u);
  EXPECT_LE(requests_at_reset, 2u) << "the reset waited for the request after the backoff";
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer.at("result").at("attempts").at(1).at("kind"), "transient");
  EXPECT_EQ(answer.at("result").at("attempts").at(1).at("delay_ms").to_number<std::int64_t>() >= 1500, true);
}

// Retries that end in an error: the partial shown for the abandoned attempt is reset before the
// error answer (it never was: the client showed a dead partial until the error came).
TEST_F(ServeStreamTest, AnAbandonedAttemptIsResetEvenWhenTheRetriesEndInAnError) {
  tree_.Write("skills/triage/skill.yaml", std::string(test_support::kStreamedTriageSkill) +
                                              "retry: { transient: { max_retries: 1, initial_delay_ms: 10 } }\n");
  const std::string doomed = OpenAiStream({"{\"category\":\"question\",", "\"title\":\"Why\"}"});
  sse_.Enqueue(Streamed(doomed, 4, doomed.find("\\\"title")));  // then 500s
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(kInvokeEvery));
  std::vector<json::value> lines = ReadUntilAnswer(*client);
  EXPECT_EQ(Methods(lines), (std::vector<std::string>{"skills.partial 1", "skills.reset 1"}));
  EXPECT_EQ(lines.back().at("error").at("data").at("code"), "PROVIDER_UNAVAILABLE") << json::serialize(lines.back());
}

// The simulated provider answers without a pause: the retry's reset and
// partial must still come before the answer on the socket, and nothing after it.
TEST_F(ServeStreamTest, OnTheSimulatedProviderTheResetAndTheRetrysPartialComeBeforeTheAnswer) {
  tree_.Write(
      "skillrunner.yaml",
      "providers:\n  sim: { kind: simulated }\nmodels:\n  m-loop: { provider: sim, structured_output: none }\n");
  tree_.Write("skills/triage/skill.yaml", std::string(test_support::kStreamedTriageSkill) +
                                              "simulation:\n  faults:\n    - {attempt: 1, fault: wrong_type, path: "
                                              "/title}\n");
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(client->Send(kInvoke));
    std::vector<json::value> lines = ReadUntilAnswer(*client);
    EXPECT_EQ(Methods(lines), (std::vector<std::string>{"skills.partial 1", "skills.reset 1", "skills.partial 2"}))
        << "round " << round;
    EXPECT_TRUE(lines.back().at("result").is_object()) << json::serialize(lines.back());
    EXPECT_FALSE(client->ReadJson(200ms).has_value()) << "a line after the answer, round " << round;
  }
}

TEST_F(ServeStreamTest, StreamingInsideABatchIsInvalidParamsAndHandlersSendNoPartials) {
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  std::string line(kInvoke);
  line.pop_back();
  json::value batch = client->Call("[" + line + "]\n");
  ASSERT_TRUE(batch.is_array());
  EXPECT_EQ(batch.at(0).at("error").at("code"), json::value(-32602));
  EXPECT_EQ(batch.at(0).at("error").at("message"),
            json::value("Invalid params: /options/stream: streaming is not available inside a batch: send the "
                        "request on a line of its own"));
  json::value echoed = client->Call(
      R"({"jsonrpc":"2.0","id":8,"method":"skills.invoke","params":{"skill":"echoer","input":{"a":1},"options":{"stream":true}}})"
      "\n");
  EXPECT_EQ(echoed.at("id"), json::value(8));
  EXPECT_EQ(echoed.at("result").at("output"), json::parse(R"({"a":1})"));
  EXPECT_TRUE(sse_.request_bodies().empty());
}

TEST_F(ServeStreamTest, AClientThatDisconnectsCancelsTheProviderStream) {
  const std::string body = OpenAiStream(kValid);
  auto script = Streamed(body, 0, body.find("Crash"));
  script.hold_timeout = 8000ms;
  sse_.Enqueue(script);
  ServeProcess serve(tree_, {"--socket", socket_});
  auto client = ConnectWhenReady(socket_);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(kInvoke));
  auto first = client->ReadJson(10s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->at("method"), json::value("skills.partial"));
  const auto closed_at = std::chrono::steady_clock::now();
  client->Close();
  EXPECT_TRUE(sse_.WaitForHangUps(1, 6s));
  EXPECT_LT(std::chrono::steady_clock::now() - closed_at, 6s);
}

TEST_F(ServeStreamTest, RunStreamPrintsTheEventsAsJsonLinesThenTheResult) {
  sse_.Enqueue(Streamed(OpenAiStream(kValid), 5));
  auto result = test_support::Skillrunner(
      tree_.root(), "run triage --input '{\"text\":\"x\"}' --stream --partial-interval-ms 0 --no-tree-cache");
  EXPECT_EQ(result.status, 0) << result.out;
  std::vector<std::string> lines;
  std::stringstream in(result.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << result.out;
  EXPECT_EQ(
      lines[0],
      R"({"jsonrpc":"2.0","method":"skills.partial","params":{"attempt":1,"value":{"category":"b"},"complete":[],"id":null}})");
  EXPECT_EQ(
      lines[2],
      R"({"jsonrpc":"2.0","method":"skills.partial","params":{"attempt":1,"value":{"category":"bug","title":"Crash"},)"
      R"("complete":["/category","/title",""],"id":null}})");
  EXPECT_EQ(json::parse(lines[3]).at("output"), json::parse(R"({"category":"bug","title":"Crash"})"));
}

}  // namespace
}  // namespace skillrunner
