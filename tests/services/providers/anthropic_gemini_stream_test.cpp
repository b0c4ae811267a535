// Anthropic and Gemini answers streamed (docs/streaming.md): the exact event
// sequences split at every byte boundary, and over a loopback SSE server.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include "services/providers/anthropic_provider.h"
#include "services/providers/anthropic_stream.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/gemini_stream.h"
#include "tests/support/sse_server.h"

namespace skillrunner::providers {
namespace {
namespace json = boost::json;
using test_support::SseServer;
using test_support::Streamed;

const std::string kAnswer = "{\"category\":\"bug\",\"title\":\"Caf\xC3\xA9\"}";

std::string AnthropicTextStream() {
  return "event: message_start\n"
         R"(data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],)"
         R"("model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,)"
         R"("cache_read_input_tokens":5,"cache_creation_input_tokens":0,"output_tokens":1}}})"
         "\n\nevent: content_block_start\n"
         R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
         "\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\nevent: content_block_delta\n"
         R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{\"category\":\"bug\","}})"
         "\n\nevent: content_block_delta\n"
         "data: "
         "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\\"title\\\":"
         "\\\"Caf\xC3\xA9\\\"}\"}}"
         "\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\n"
         R"(data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":14}})"
         "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}

std::string AnthropicToolStream() {
  return "event: message_start\n"
         R"(data: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],)"
         R"("model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":40,"output_tokens":1}}})"
         "\n\nevent: content_block_start\n"
         R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"out","input":{}}})"
         "\n\nevent: content_block_delta\n"
         R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}})"
         "\n\nevent: content_block_delta\n"
         R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"category\": \"bu"}})"
         "\n\nevent: content_block_delta\n"
         R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"g\"}"}})"
         "\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\n"
         R"(data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}})"
         "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}

std::string GeminiStream() {
  return R"(data: {"candidates": [{"content": {"parts": [{"text": "{\"category\":\"bug\","}],"role": "model"},"index": 0}],)"
         R"("usageMetadata": {"promptTokenCount": 18,"totalTokenCount": 18},"modelVersion": "gemini-2.5-flash","responseId": "r1"})"
         "\r\n\r\n"
         "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": "
         "\"\\\"title\\\":\\\"Caf\xC3\xA9\\\"}\"}],\"role\": \"model\"},"
         "\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": "
         "18,\"candidatesTokenCount\": 11,"
         "\"totalTokenCount\": 29},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n";
}

http::HttpResponse StreamResponse(std::string body) {
  http::HttpResponse response;
  response.status = 200;
  response.headers = {{"content-type", "text/event-stream"}};
  response.body = std::move(body);
  return response;
}

// The answer after feeding `body` in two pieces split at each byte, with the
// pieces passed to on_text checked against the answer's text.
template <class Make>
void ExpectEverySplit(Make make, const std::string& body, ChatRequest request, const std::string& expected_text,
                      std::int64_t input_tokens, std::int64_t output_tokens) {
  for (std::size_t split = 0; split <= body.size(); ++split) {
    std::string pieces;
    request.on_text = [&](std::string_view piece) {
      pieces.append(piece);
      return true;
    };
    auto stream = make(request);
    ASSERT_TRUE(stream->Feed(std::string_view(body).substr(0, split)));
    ASSERT_TRUE(stream->Feed(std::string_view(body).substr(split)));
    auto answer = stream->Finish(StreamResponse(body), request);
    ASSERT_TRUE(answer) << answer.error().message;
    ASSERT_EQ(pieces, expected_text) << "split at " << split;
    ASSERT_EQ(json::parse(answer->text), json::parse(expected_text)) << "split at " << split;
    ASSERT_EQ(answer->usage.input_tokens, input_tokens);
    ASSERT_EQ(answer->usage.output_tokens, output_tokens);
    ASSERT_FALSE(answer->usage.estimated);
    ASSERT_EQ(answer->finish_reason, FinishReason::kStop);
  }
}

TEST(AnthropicStreamTest, TextDeltasSplitAtEveryByteBoundary) {
  ChatRequest request;
  ExpectEverySplit(MakeAnthropicChatStream, AnthropicTextStream(), request, kAnswer, 30, 14);
}

TEST(AnthropicStreamTest, ToolModeStreamsInputJsonDeltas) {
  ChatRequest request;
  request.response_format.kind = ResponseFormat::Kind::kTool;
  ExpectEverySplit(MakeAnthropicChatStream, AnthropicToolStream(), request, "{\"category\": \"bug\"}", 40, 9);
  auto stream = MakeAnthropicChatStream(request);
  stream->Feed(AnthropicToolStream());
  EXPECT_TRUE(stream->Finish(StreamResponse(AnthropicToolStream()), request)->tool_call);
}

TEST(AnthropicStreamTest, AnErrorEventIsARetryableError) {
  ChatRequest request;
  auto stream = MakeAnthropicChatStream(request);
  const std::string start = AnthropicTextStream();
  const std::string body = start.substr(0, start.find("\n\n") + 2) +
                           "event: error\n"
                           R"(data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"
                           "\n\n";
  stream->Feed(body);
  auto answer = stream->Finish(StreamResponse(body), request);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().type, "overloaded_error");
  EXPECT_EQ(answer.error().message, "Overloaded");
  EXPECT_TRUE(answer.error().retryable);
}

TEST(GeminiStreamTest, WholeResponsesPerEventSplitAtEveryByteBoundary) {
  ChatRequest request;
  ExpectEverySplit(MakeGeminiChatStream, GeminiStream(), request, kAnswer, 18, 11);
}

class StreamLoopbackTest : public ::testing::Test {
 protected:
  template <class P>
  std::expected<ChatResponse, ProviderError> Send(P& provider, ChatRequest& request) {
    auto future = boost::asio::co_spawn(io_, provider.Chat(request), boost::asio::use_future);
    io_.run();
    return future.get();
  }
  static std::optional<std::string> Env(std::string_view) { return std::string("sk-test"); }

  // A streamed request of `model`, each piece of text kept in pieces_.
  ChatRequest Streaming(const std::string& model) {
    ChatRequest request;
    request.model = model;
    request.messages = {{"user", "Triage."}};
    request.on_text = [this](std::string_view piece) {
      pieces_.append(piece);
      return true;
    };
    return request;
  }

  SseServer server_;
  boost::asio::io_context io_;
  std::string pieces_;
};

TEST_F(StreamLoopbackTest, AnthropicAskedToStreamReadsEveryByteInItsOwnWrite) {
  server_.Enqueue(Streamed(AnthropicTextStream(), 1));
  AnthropicOptions options;
  options.base_url = server_.base_url();
  AnthropicProvider provider(options, http::MakeHttpClient(io_.get_executor()), Env);
  ChatRequest request = Streaming("claude-sonnet-4-5");
  auto answer = Send(provider, request);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(pieces_, kAnswer);
  EXPECT_EQ(answer->text, kAnswer);
  EXPECT_EQ(answer->usage.output_tokens, 14);
  EXPECT_EQ(json::parse(server_.request_bodies()[0]).at("stream"), json::value(true));
  EXPECT_EQ(server_.request_targets()[0], "/v1/messages");
}

TEST_F(StreamLoopbackTest, GeminiAskedToStreamUsesStreamGenerateContentWithAltSse) {
  server_.Enqueue(Streamed(GeminiStream(), 1));
  GeminiOptions options;
  options.base_url = server_.base_url();
  GeminiProvider provider(options, http::MakeHttpClient(io_.get_executor()), Env);
  ChatRequest request = Streaming("gemini-2.5-flash");
  auto answer = Send(provider, request);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(pieces_, kAnswer);
  EXPECT_EQ(answer->usage.output_tokens, 11);
  EXPECT_EQ(server_.request_targets()[0], "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
}

}  // namespace
}  // namespace skillrunner::providers
