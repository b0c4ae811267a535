// A skill's generation streamed (design.md §10.7): partials per attempt, a reset
// when an attempt is abandoned, early abort that closes the provider's
// stream, against a loopback SSE server behind a real openai provider.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "runner/skill_runner.h"
#include "services/common/stream_events.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/sse_chunks.h"
#include "tests/support/sse_server.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::JsonAnswer;
using test_support::OpenAiStream;
using test_support::SseServer;
using test_support::Streamed;

struct Event {
  std::string method;
  json::object params;
};

class StreamingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bed_.AddSkill("triage", test_support::kStreamedTriageSkill);
    bed_.Start();
  }

  InvocationOutcome Invoke(bool stream) {
    InvocationOptions options;
    if (stream) options.stream = &events_;
    return bed_.Invoke("triage", R"({"text":"it crashes"})", options);
  }

  test_support::BasicLlmTestBed<SseServer> bed_;
  SseServer& server_ = bed_.server();
  std::vector<Event> received_;
  StreamEvents events_{[this](std::string_view method, json::object params) {
    received_.push_back({std::string(method), std::move(params)});
  }};
};

const std::vector<std::string> kValidPieces = {"{\"category\":\"b", "ug\",\"ti", "tle\":\"Crash on sa", "ve\"}"};

TEST_F(StreamingTest, PartialsGrowTowardsTheAnswerWithCompletePointersAndUsage) {
  server_.Enqueue(Streamed(OpenAiStream(kValidPieces), 1));
  InvocationOutcome outcome = Invoke(true);
  ASSERT_TRUE(outcome) << outcome.error().error.message;
  EXPECT_EQ(outcome->output, json::parse(R"({"category":"bug","title":"Crash on save"})"));
  std::vector<std::string> values;
  for (const Event& e : received_) {
    ASSERT_EQ(e.method, "skills.partial");
    ASSERT_EQ(e.params.at("attempt"), json::value(1));
    values.push_back(json::serialize(e.params.at("value")) + " " + json::serialize(e.params.at("complete")));
  }
  EXPECT_EQ(values,
            (std::vector<std::string>{R"({"category":"b"} [])", R"({"category":"bug"} ["/category"])",
                                      R"({"category":"bug","title":"Crash on sa"} ["/category"])",
                                      R"({"category":"bug","title":"Crash on save"} ["/category","/title",""])"}));
  ASSERT_EQ(outcome->attempts.size(), 1u);
  EXPECT_EQ(outcome->attempts[0].output_tokens, 12);
  EXPECT_EQ(outcome->attempts[0].input_tokens, 30);
  EXPECT_FALSE(outcome->attempts[0].tokens_estimated);
  EXPECT_EQ(json::parse(server_.request_bodies()[0]).at("stream"), json::value(true));
}

TEST_F(StreamingTest, AWrongEnumAbortsTheStreamAndTheRetryStartsFreshWithTheError) {
  const std::string doomed = OpenAiStream({"{\"category\":\"ques", "tion\",", "\"title\":\"Why does it", " crash?\"}"});
  server_.Enqueue(Streamed(doomed, 5, doomed.find("\\\"title")));
  server_.Enqueue(Streamed(OpenAiStream(kValidPieces)));
  InvocationOutcome outcome = Invoke(true);
  ASSERT_TRUE(outcome) << outcome.error().error.message;
  EXPECT_EQ(outcome->output, json::parse(R"({"category":"bug","title":"Crash on save"})"));
  EXPECT_TRUE(server_.WaitForHangUps(1));  // closed before the rest was sent
  ASSERT_EQ(outcome->attempts.size(), 2u);
  const Attempt& aborted = outcome->attempts[0];
  EXPECT_EQ(aborted.kind, AttemptKind::kValidation);
  EXPECT_TRUE(aborted.aborted_early);
  EXPECT_TRUE(aborted.tokens_estimated);
  EXPECT_GT(aborted.output_tokens, 0);
  EXPECT_EQ(aborted.raw, "{\"category\":\"question\",");
  const std::vector<FieldError> why = {{"/category", "expected one of [\"bug\",\"feature\"], found \"question\""}};
  EXPECT_EQ(aborted.errors, why);
  EXPECT_EQ(ToJson(aborted).at("aborted_early"), json::value(true));
  std::vector<std::string> sequence;
  for (const Event& e : received_) sequence.push_back(e.method + " " + json::serialize(e.params.at("attempt")));
  ASSERT_GE(sequence.size(), 3u);
  const std::size_t reset = std::find(sequence.begin(), sequence.end(), "skills.reset 1") - sequence.begin();
  ASSERT_LT(reset, sequence.size());
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    EXPECT_EQ(sequence[i], i < reset ? "skills.partial 1" : i == reset ? "skills.reset 1" : "skills.partial 2");
  }
  EXPECT_EQ(received_[reset].params.at("reason"), json::value("validation"));
  EXPECT_EQ(
      received_[reset].params.at("errors"),
      json::parse(R"([{"path":"/category","message":"expected one of [\"bug\",\"feature\"], found \"question\""}])"));
  // Fed back fresh-style: the cut text is not shown to the model again.
  const json::array first = json::parse(server_.request_bodies()[0]).at("messages").as_array();
  const json::array second = json::parse(server_.request_bodies()[1]).at("messages").as_array();
  ASSERT_EQ(second.size(), first.size() + 1);
  EXPECT_EQ(second.back().at("role"), json::value("user"));
  EXPECT_NE(json::serialize(second.back()).find("/category"), std::string::npos);
}

TEST_F(StreamingTest, WithoutStreamingTheRequestAsksForNoStream) {
  server_.Enqueue(JsonAnswer(test_support::OpenAiAnswer(R"({"category":"bug","title":"x"})")));
  InvocationOutcome outcome = Invoke(false);
  ASSERT_TRUE(outcome) << outcome.error().error.message;
  EXPECT_FALSE(json::parse(server_.request_bodies()[0]).as_object().contains("stream"));
  EXPECT_TRUE(received_.empty());
  EXPECT_FALSE(ToJson(outcome->attempts[0]).as_object().contains("aborted_early"));
}

}  // namespace
}  // namespace skillrunner
