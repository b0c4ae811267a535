// OpenAI chat completions streamed (docs/streaming.md): the exact event
// sequence split at every byte boundary, and over a loopback SSE server.
#include "services/providers/openai_stream.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include "services/providers/openai_provider.h"
#include "tests/support/sse_server.h"

namespace skillrunner::providers {
namespace {
namespace json = boost::json;
using test_support::JsonAnswer;
using test_support::SseServer;
using test_support::Streamed;

std::string Chunk(std::string_view delta, std::string_view finish = "null") {
  return R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024","choices":[{"index":0,"delta":)" +
         std::string(delta) + R"(,"finish_reason":)" + std::string(finish) + "}],\"usage\":null}\n\n";
}

// role, three content pieces (one with a UTF-8 character), finish, usage, [DONE].
std::string AnswerStream() {
  return Chunk(R"({"role":"assistant","content":""})") + ": keep-alive\n\n" +
         Chunk(R"({"content":"{\"title\":\"Caf"})") + Chunk("{\"content\":\"\xC3\xA9\\\",\\\"category\"}") +
         Chunk(R"({"content":"\":\"bug\"}"})") + Chunk("{}", "\"stop\"") +
         R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024","choices":[],)"
         R"("usage":{"prompt_tokens":31,"completion_tokens":9,"total_tokens":40,"prompt_tokens_details":{"cached_tokens":8}}})"
         "\n\ndata: [DONE]\n\n";
}

const std::string kAnswer = "{\"title\":\"Caf\xC3\xA9\",\"category\":\"bug\"}";

http::HttpResponse StreamResponse(std::string body, bool stopped = false) {
  http::HttpResponse response;
  response.status = 200;
  response.headers = {{"content-type", "text/event-stream"}, {"x-request-id", "req-9"}};
  response.body = std::move(body);
  response.stopped = stopped;
  return response;
}

TEST(OpenAiStreamTest, SplitAtEveryByteBoundaryGivesTheTextPiecesAndUsage) {
  const std::string body = AnswerStream();
  for (std::size_t split = 0; split <= body.size(); ++split) {
    ChatRequest request;
    request.model = "gpt-4o-mini";
    std::string pieces;
    request.on_text = [&](std::string_view piece) {
      pieces.append(piece);
      return true;
    };
    auto stream = MakeOpenAiChatStream(request);
    ASSERT_TRUE(stream->Feed(std::string_view(body).substr(0, split)));
    ASSERT_TRUE(stream->Feed(std::string_view(body).substr(split)));
    auto answer = stream->Finish(StreamResponse(body), request);
    ASSERT_TRUE(answer) << answer.error().message;
    ASSERT_EQ(pieces, kAnswer) << "split at " << split;
    ASSERT_EQ(answer->text, kAnswer);
    ASSERT_EQ(answer->usage.input_tokens, 31);
    ASSERT_EQ(answer->usage.output_tokens, 9);
    ASSERT_EQ(answer->usage.cached_input_tokens, 8);
    ASSERT_FALSE(answer->usage.estimated);
    ASSERT_EQ(answer->finish_reason, FinishReason::kStop);
    ASSERT_EQ(answer->model, "gpt-4o-mini-2024");
    ASSERT_EQ(answer->request_id, "req-9");
    ASSERT_FALSE(answer->stopped_early);
  }
}

TEST(OpenAiStreamTest, ToolCallArgumentsAndRefusalsStream) {
  ChatRequest request;
  std::string pieces;
  request.on_text = [&](std::string_view piece) {
    pieces.append(piece);
    return true;
  };
  auto stream = MakeOpenAiChatStream(request);
  const std::string body =
      Chunk(
          R"({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"out","arguments":""}}]})") +
      Chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]})") +
      Chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]})") + Chunk("{}", "\"tool_calls\"") +
      "data: [DONE]\n\n";
  stream->Feed(body);
  auto answer = stream->Finish(StreamResponse(body), request);
  ASSERT_TRUE(answer);
  EXPECT_EQ(pieces, "{\"a\":1}");
  EXPECT_TRUE(answer->tool_call);
  EXPECT_TRUE(answer->usage.estimated);

  auto refusing = MakeOpenAiChatStream(request);
  const std::string refusal = Chunk(R"({"refusal":"I can't"})") + Chunk(R"({"refusal":" help."})", "\"stop\"");
  refusing->Feed(refusal);
  auto refused = refusing->Finish(StreamResponse(refusal), request);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refusal, "I can't help.");
  EXPECT_EQ(refused->finish_reason, FinishReason::kRefusal);
}

TEST(OpenAiStreamTest, AnErrorEventAndAStreamCutShortAreRetryableErrors) {
  ChatRequest request;
  auto stream = MakeOpenAiChatStream(request);
  const std::string body = Chunk(R"({"content":"{"})") +
                           "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n";
  EXPECT_FALSE(stream->Feed(body));
  auto errored = stream->Finish(StreamResponse(body), request);
  ASSERT_FALSE(errored);
  EXPECT_EQ(errored.error().message, "The server had an error");
  EXPECT_EQ(errored.error().type, "server_error");
  EXPECT_TRUE(errored.error().retryable);

  auto cut = MakeOpenAiChatStream(request);
  cut->Feed(Chunk(R"({"content":"{"})"));
  auto dropped = cut->Finish(StreamResponse(Chunk(R"({"content":"{"})")), request);
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().kind, ProviderError::Kind::kNetwork);
  EXPECT_EQ(dropped.error().message, "the stream ended before the answer was complete");
  EXPECT_TRUE(dropped.error().retryable);
}

class OpenAiStreamLoopbackTest : public ::testing::Test {
 protected:
  std::expected<ChatResponse, ProviderError> Send(ChatRequest& request) {
    OpenAiOptions options;
    options.base_url = server_.base_url() + "/v1";
    OpenAiProvider provider(options, http::MakeHttpClient(io_.get_executor()),
                            [](std::string_view) { return std::optional<std::string>(); });
    auto future = boost::asio::co_spawn(io_, provider.Chat(request), boost::asio::use_future);
    io_.run();
    return future.get();
  }

  SseServer server_;
  boost::asio::io_context io_;
};

TEST_F(OpenAiStreamLoopbackTest, EveryByteInItsOwnWriteStreamsTheAnswerWithUsage) {
  server_.Enqueue(Streamed(AnswerStream(), 1));
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {{"user", "Triage."}};
  std::vector<std::string> pieces;
  request.on_text = [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  };
  auto answer = Send(request);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(answer->text, kAnswer);
  EXPECT_EQ(pieces.size(), 3u);
  EXPECT_EQ(answer->usage.output_tokens, 9);
  ASSERT_EQ(server_.request_targets(), std::vector<std::string>{"/v1/chat/completions"});
  json::value sent = json::parse(server_.request_bodies()[0]);
  EXPECT_EQ(sent.at("stream"), json::value(true));
  EXPECT_EQ(sent.at("stream_options"), json::parse(R"({"include_usage":true})"));
}

TEST_F(OpenAiStreamLoopbackTest, StoppingTheStreamClosesTheConnectionBeforeTheRest) {
  const std::string body = AnswerStream();
  const std::size_t second_piece_end = body.find("category");  // inside the third content chunk
  server_.Enqueue(Streamed(body, 7, second_piece_end));
  ChatRequest request;
  request.on_text = [&](std::string_view piece) { return piece.find("Caf") == std::string_view::npos; };
  auto answer = Send(request);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_TRUE(answer->stopped_early);
  EXPECT_EQ(answer->text, "{\"title\":\"Caf");
  EXPECT_TRUE(answer->usage.estimated);
  EXPECT_TRUE(server_.WaitForHangUps(1));
}

}  // namespace
}  // namespace skillrunner::providers
