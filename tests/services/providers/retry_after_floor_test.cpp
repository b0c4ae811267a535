// A server-given delay is a floor (design.md §5.2, §9.6): every header form a provider sends, through
// the stack every path uses (RetryingProvider over LimitedProvider and the provider's limiter), on a
// clock that moves by the waits asked of it. The loopback server stamps each request with that clock,
// so the gap it sees between a refused request and its retry is the wait: at least the server's
// delay, at most the delay plus the spread (a quarter of it, a second at most).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <mutex>

#include "services/providers/anthropic_provider.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/limited_provider.h"
#include "services/providers/openai_provider.h"
#include "services/providers/retrying_provider.h"
#include "services/state/request_limiter.h"
#include "tests/support/anthropic_batch_server.h"
#include "tests/support/gemini_batch_server.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"

namespace skillrunner::providers {
namespace {
using std::chrono::milliseconds;
using test_support::kTestApiKey;
using test_support::LoopbackServer;
using test_support::ScriptedResponse;

std::optional<std::string> TestEnv(std::string_view name) {
  if (name == "OPENAI_API_KEY" || name == "ANTHROPIC_API_KEY" || name == "GEMINI_API_KEY") {
    return std::string(kTestApiKey);
  }
  return std::nullopt;
}

enum class Kind { kOpenAi, kAnthropic, kGemini };

// One header form: the refusal that carries it, the answer after it, and the delay it asks for.
struct Form {
  std::string name;
  Kind kind;
  ScriptedResponse refusal;
  std::string answer;
  milliseconds delay;
};

std::string GeminiRetryInfo(const std::string& delay) {
  return R"({"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",)"
         R"("status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo",)"
         R"("retryDelay":")" +
         delay + R"("}]}})";
}

std::vector<Form> Forms() {
  const std::string limited = test_support::OpenAiError("Rate limit reached for requests", "requests");
  const std::string ok = test_support::OpenAiAnswer(R"({"ok":true})");
  return {
      {"retry-after-ms",
       Kind::kOpenAi,
       {.status = 429, .headers = {{"retry-after-ms", "150"}}, .body = limited},
       ok,
       milliseconds(150)},
      {"retry-after-ms 400",
       Kind::kOpenAi,
       {.status = 429, .headers = {{"retry-after-ms", "400"}}, .body = limited},
       ok,
       milliseconds(400)},
      {"Retry-After seconds",
       Kind::kOpenAi,
       {.status = 429, .headers = {{"retry-after", "1"}}, .body = limited},
       ok,
       milliseconds(1000)},
      // Against the server's own Date (years before this machine's clock): 2 s, not 0.
      {"Retry-After HTTP date",
       Kind::kOpenAi,
       {.status = 429,
        .headers = {{"date", "Wed, 21 Oct 2015 07:28:00 GMT"}, {"retry-after", "Wed, 21 Oct 2015 07:28:02 GMT"}},
        .body = limited},
       ok,
       milliseconds(2000)},
      {"a 503 with Retry-After",
       Kind::kOpenAi,
       {.status = 503, .headers = {{"retry-after", "1"}}, .body = limited},
       ok,
       milliseconds(1000)},
      {"Anthropic retry-after",
       Kind::kAnthropic,
       {.status = 429,
        .headers = {{"retry-after", "1"}},
        .body =
            R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit."}})"},
       test_support::AnthropicAnswer(R"({"ok":true})"),
       milliseconds(1000)},
      {"Gemini RetryInfo",
       Kind::kGemini,
       {.status = 429, .body = GeminiRetryInfo("1.5s")},
       test_support::GeminiAnswer(R"({"ok":true})"),
       milliseconds(1500)},
  };
}

class RetryAfterFloorTest : public ::testing::TestWithParam<double> {
 protected:
  void SetUp() override {
    clock_.advance = true;
    // Each request's arrival on the test's clock: the gap the server sees.
    server_.SetRouter([this](const test_support::RecordedRequest&) -> std::optional<ScriptedResponse> {
      std::lock_guard lock(mutex_);
      arrivals_.push_back(clock_.Now());
      return std::nullopt;
    });
  }
  std::shared_ptr<Provider> Make(Kind kind) {
    auto http = http::MakeHttpClient(io_.get_executor());
    switch (kind) {
      case Kind::kAnthropic: {
        AnthropicOptions options;
        options.base_url = server_.base_url();
        return std::make_shared<AnthropicProvider>(options, std::move(http), TestEnv);
      }
      case Kind::kGemini: {
        GeminiOptions options;
        options.base_url = server_.base_url();
        return std::make_shared<GeminiProvider>(options, std::move(http), TestEnv);
      }
      default: {
        OpenAiOptions options;
        options.base_url = server_.base_url() + "/v1";
        return std::make_shared<OpenAiProvider>(options, std::move(http), TestEnv);
      }
    }
  }
  // One call through the retry policy, the provider's limiter and the provider.
  Result<ChatResponse> Send(Kind kind) {
    auto limiter = std::make_shared<state::RequestLimiter>(state::RateLimit{}, clock_);
    LimitedProvider limited(Make(kind), limiter, clock_);
    const double spread = GetParam();
    RetryingProvider retrying(limited, RetryingProviderOptions{[] { return 0.0; }, [spread] { return spread; }});
    const auto start = clock_.Now();
    ctx_ = std::make_unique<InvocationContext>("s", InvocationOptions{}, start + std::chrono::minutes(5), clock_);
    ctx_->set_started(start);
    ChatRequest request;
    request.model = kind == Kind::kGemini ? "gemini-2.5-flash" : "test-model";
    request.messages = {{"user", "Say ok as JSON."}};
    request.max_output_tokens = 64;
    auto future = boost::asio::co_spawn(io_, retrying.Chat(request, policy_, *ctx_), boost::asio::use_future);
    io_.restart();
    io_.run();
    return future.get();
  }

  LoopbackServer server_;
  boost::asio::io_context io_;
  test_support::RecordingSleeper clock_;
  TransientRetryPolicy policy_;
  std::unique_ptr<InvocationContext> ctx_;
  std::mutex mutex_;
  std::vector<Clock::TimePoint> arrivals_;
};

TEST_P(RetryAfterFloorTest, EveryHeaderFormIsWaitedOutAndTheSpreadOnlyAddsToIt) {
  for (const Form& form : Forms()) {
    SCOPED_TRACE(form.name);
    arrivals_.clear();
    server_.Enqueue(form.refusal);
    server_.Enqueue({.body = form.answer});
    auto result = Send(form.kind);
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_EQ(arrivals_.size(), 2u);
    const auto gap = std::chrono::duration_cast<milliseconds>(arrivals_[1] - arrivals_[0]);
    const milliseconds spread{std::min<std::int64_t>(1000, form.delay.count() / 4)};
    EXPECT_GE(gap, form.delay);
    // The spread drawn, and the loopback round trip of the refusal in real time.
    EXPECT_LE(gap,
              form.delay + milliseconds(static_cast<std::int64_t>(GetParam() * spread.count())) + milliseconds(250));
    ASSERT_EQ(ctx_->attempts().size(), 1u);
    EXPECT_GE(ctx_->attempts()[0].delay_ms, form.delay.count());
    EXPECT_GE(result->timing.waited_ms, form.delay.count());  // the answer's wait: the retry's
  }
}

// The spread at its two ends: none, and all of it.
INSTANTIATE_TEST_SUITE_P(Spreads, RetryAfterFloorTest, ::testing::Values(0.0, 0.999));

}  // namespace
}  // namespace skillrunner::providers
