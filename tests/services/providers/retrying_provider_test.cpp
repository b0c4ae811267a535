#include "services/providers/retrying_provider.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <deque>

#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::providers {
namespace {
namespace json = boost::json;
using std::chrono::milliseconds;

// Answers from a script, one entry per request; records what it was sent.
// With `clock`, each request takes `request_time` on it.
class ScriptedProvider : public Provider {
 public:
  std::deque<std::expected<ChatResponse, ProviderError>> script;
  std::vector<ChatRequest> requests;
  test_support::FakeClock* clock = nullptr;
  milliseconds request_time{0};
  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override {
    requests.push_back(request);
    if (clock != nullptr) clock->Advance(request_time);
    auto next = script.front();
    if (script.size() > 1) script.pop_front();
    co_return next;
  }
};

ProviderError Http(int status, std::optional<milliseconds> retry_after = {}) {
  ProviderError e;
  e.kind = ProviderError::Kind::kHttp;
  e.http_status = status;
  e.retryable = status == 408 || status == 409 || status == 429 || status >= 500;
  e.retry_after = retry_after;
  e.message = "boom " + std::to_string(status);
  e.type = "some_error";
  return e;
}

ChatResponse Ok() {
  ChatResponse r;
  r.text = "{}";
  return r;
}

class RetryingProviderTest : public ::testing::Test {
 protected:
  Result<ChatResponse> Run(double u = 0.0, milliseconds budget = milliseconds(600'000)) {
    RetryingProviderOptions options;
    options.random = [u] { return u; };
    options.spread = [this] { return spread_; };
    RetryingProvider retrying(provider_, options);
    const auto start = sleeper_.Now();
    ctx_ = std::make_unique<InvocationContext>("s", InvocationOptions{}, start + budget, sleeper_);
    ctx_->set_started(start);  // as SkillRunner does: the deadline counts from the same instant
    ChatRequest request;
    return test_support::RunAwaitable(retrying.Chat(request, policy_, *ctx_));
  }
  ScriptedProvider provider_;
  test_support::FakeClock sleeper_;
  double spread_ = 0.0;
  TransientRetryPolicy policy_;
  std::unique_ptr<InvocationContext> ctx_;
};

TEST_F(RetryingProviderTest, ACancelledBackoffWaitEndsTheCallCancelledWithoutAnotherRequest) {
  provider_.script = {std::unexpected(Http(503)), Ok()};
  sleeper_.cancel_at = 0;
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(result.error().message, "cancelled");
  EXPECT_EQ(sleeper_.DelaysMs(), (std::vector<std::int64_t>{2000}));
  EXPECT_EQ(provider_.requests.size(), 1u);
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kTransient);
  EXPECT_EQ(ctx_->attempts()[0].delay_ms, 2000);
}

TEST_F(RetryingProviderTest, EachRequestTimesItselfAndTheWaitBeforeItWhichAddUpToTheCallsTime) {
  provider_.clock = &sleeper_;
  provider_.request_time = milliseconds(3);
  ProviderError limited = Http(429, milliseconds(1000));
  limited.queued_ms = 0;
  ChatResponse ok = Ok();
  ok.queued_ms = 0;
  provider_.script = {std::unexpected(limited), std::unexpected(Http(500)), ok};
  const auto started = sleeper_.Now();
  auto result = Run();
  ASSERT_TRUE(result);
  ASSERT_EQ(ctx_->attempts().size(), 2u);
  const Attempt& first = ctx_->attempts()[0];
  const Attempt& second = ctx_->attempts()[1];
  EXPECT_EQ(first.http_status, 429);
  EXPECT_EQ(first.waited_ms, 0);
  EXPECT_EQ(first.duration_ms, 3);
  EXPECT_EQ(first.delay_ms, 1000);
  EXPECT_EQ(second.http_status, 500);
  EXPECT_EQ(second.waited_ms, 1000);  // the retry-after
  EXPECT_EQ(second.duration_ms, 3);
  EXPECT_EQ(second.delay_ms, 2000);
  EXPECT_EQ(result->timing.waited_ms, 2000);  // the backoff, not counted into the answer's time
  EXPECT_EQ(result->timing.duration_ms, 3);
  EXPECT_EQ(first.waited_ms + first.duration_ms + second.waited_ms + second.duration_ms + result->timing.waited_ms +
                result->timing.duration_ms,
            sleeper_.ElapsedMs(started));
}

TEST_F(RetryingProviderTest, TheRateLimitQueueIsPartOfTheWaitNotOfTheRequest) {
  provider_.clock = &sleeper_;
  provider_.request_time = milliseconds(40);  // of which 30 in the limiter's queue
  ChatResponse ok = Ok();
  ok.queued_ms = 30;
  provider_.script = {ok};
  auto result = Run();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->timing.waited_ms, 30);
  EXPECT_EQ(result->timing.duration_ms, 10);
}

TEST_F(RetryingProviderTest, ARequestCancelledInFlightStaysOnRecordAsCancelled) {
  provider_.clock = &sleeper_;
  provider_.request_time = milliseconds(25);
  ProviderError cancelled;
  cancelled.kind = ProviderError::Kind::kCancelled;
  cancelled.message = "request cancelled";
  provider_.script = {std::unexpected(cancelled)};
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kCancelled);
  EXPECT_EQ(ctx_->attempts()[0].duration_ms, 25);
  EXPECT_EQ(json::serialize(ToJson(ctx_->attempts()[0]).at("kind")), "\"cancelled\"");
}

TEST_F(RetryingProviderTest, RetryAfterMsReplacesTheBackoff) {
  provider_.script = {std::unexpected(Http(429, milliseconds(150))), Ok()};
  auto result = Run();
  ASSERT_TRUE(result);
  EXPECT_EQ(sleeper_.DelaysMs(), (std::vector<std::int64_t>{150}));
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kTransient);
  EXPECT_EQ(ctx_->attempts()[0].http_status, 429);
  EXPECT_EQ(ctx_->attempts()[0].delay_ms, 150);
  EXPECT_EQ(ctx_->metrics().transient_retries, 1);
  // The simulated provider sees every request as its own attempt.
  EXPECT_EQ(provider_.requests[0].metadata.attempt, 1);
  EXPECT_EQ(provider_.requests[1].metadata.attempt, 2);
}

TEST_F(RetryingProviderTest, RateLimitWaitsSpreadPastTheServersDelayByUpToAQuarterOfItOrASecond) {
  spread_ = 0.4375;
  provider_.script = {std::unexpected(Http(429, milliseconds(2000))), std::unexpected(Http(429, milliseconds(8000))),
                      std::unexpected(Http(529)), Ok()};
  auto result = Run();
  ASSERT_TRUE(result);
  // 2000 + 0.4375 x 500 ms (a quarter of the server's delay); 8000 + 437 (a second at
  // most); the 529 has no retry-after: the backoff of the third rate-limit retry, 8000 + 437.
  EXPECT_EQ(sleeper_.DelaysMs(), (std::vector<std::int64_t>{2218, 8437, 8437}));
  spread_ = 0.0;
  provider_.requests.clear();
  provider_.script = {std::unexpected(Http(503)), Ok()};
  ASSERT_TRUE(Run());
  EXPECT_EQ(sleeper_.DelaysMs().back(), 2000);  // other transient failures get no spread
}

// A server-given delay is a floor (design.md §5.2): the spread only adds to it, whatever
// max_delay_ms says, for a 429 and for a 503 alike.
TEST_F(RetryingProviderTest, AServerGivenDelayIsAFloorThatTheSpreadOnlyAddsTo) {
  policy_.max_delay = milliseconds(100);
  spread_ = 0.999;
  provider_.script = {std::unexpected(Http(429, milliseconds(150))), std::unexpected(Http(429, milliseconds(400))),
                      std::unexpected(Http(503, milliseconds(1000))), std::unexpected(Http(429, milliseconds(8000))),
                      Ok()};
  auto result = Run();
  ASSERT_TRUE(result);
  // 150 + 0.999 x 37.5; 400 + 0.999 x 100; 1000 + 0.999 x 250; 8000 + 0.999 x 1000 (a second at most).
  EXPECT_EQ(sleeper_.DelaysMs(), (std::vector<std::int64_t>{187, 499, 1249, 8999}));
  spread_ = 0.0;
  provider_.requests.clear();
  provider_.script = {std::unexpected(Http(429, milliseconds(150))), std::unexpected(Http(429, milliseconds(1000))),
                      Ok()};
  ASSERT_TRUE(Run());
  const std::vector<std::int64_t> delays = sleeper_.DelaysMs();
  EXPECT_EQ(std::vector<std::int64_t>(delays.end() - 2, delays.end()), (std::vector<std::int64_t>{150, 1000}));
  ASSERT_EQ(ctx_->attempts().size(), 2u);
  EXPECT_EQ(ctx_->attempts()[0].delay_ms, 150);
  EXPECT_EQ(ctx_->attempts()[1].delay_ms, 1000);
}

TEST_F(RetryingProviderTest, RateLimitsHaveABudgetOfTheirOwn) {
  // Three 5xx spend max_retries; the 429s that follow still get their eight.
  provider_.script = {std::unexpected(Http(503)), std::unexpected(Http(503)), std::unexpected(Http(503))};
  for (int i = 0; i < 8; ++i) provider_.script.push_back(std::unexpected(Http(429, milliseconds(10))));
  provider_.script.push_back(Ok());
  ASSERT_TRUE(Run());
  EXPECT_EQ(provider_.requests.size(), 12u);
  EXPECT_EQ(ctx_->metrics().transient_retries, 11);

  provider_.requests.clear();
  provider_.script = {std::unexpected(Http(429, milliseconds(10)))};
  auto spent = Run();
  ASSERT_FALSE(spent);
  EXPECT_EQ(provider_.requests.size(), 9u);
  EXPECT_EQ(spent.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(spent.error().message, "the provider is still rate limiting after 8 retries: HTTP 429: boom 429");
  EXPECT_EQ(ctx_->attempts().size(), 9u);
}

TEST_F(RetryingProviderTest, ASpentQuotaFailsAtOnceSayingWaitingWillNotHelp) {
  ProviderError quota = Http(429, milliseconds(20'000));
  quota.type = "insufficient_quota";
  quota.code = "insufficient_quota";
  quota.message = "You exceeded your current quota, please check your plan and billing details.";
  provider_.script = {std::unexpected(quota), Ok()};
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(provider_.requests.size(), 1u);
  EXPECT_TRUE(sleeper_.DelaysMs().empty());
  EXPECT_EQ(result.error().code, ErrorCode::kProviderError);
  EXPECT_EQ(result.error().message,
            "the provider's quota is spent, so waiting will not help: HTTP 429: You exceeded your current quota, "
            "please check your plan and billing details.");
  EXPECT_EQ(result.error().details.at("provider_type"), "insufficient_quota");
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kProviderError);
}

TEST_F(RetryingProviderTest, NoSlotOfTheRateLimitBeforeTheDeadlineIsOverloadedWithRetryAfter) {
  ProviderError late;
  late.kind = ProviderError::Kind::kOverloaded;
  late.retry_after = std::chrono::milliseconds(9500);
  late.message =
      "the provider's rate limit (6 requests a minute) leaves no slot before the deadline; the next is "
      "free in 9500 ms";
  provider_.script = {std::unexpected(late), Ok()};
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(provider_.requests.size(), 1u);
  EXPECT_EQ(result.error().code, ErrorCode::kOverloaded);
  EXPECT_EQ(result.error().message, late.message);
  EXPECT_EQ(result.error().details.at("retry_after_ms"), 9500);
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kOverloaded);
  EXPECT_EQ(ctx_->attempts()[0].errors[0].message, late.message);
}

TEST_F(RetryingProviderTest, BacksOffTwoFourEightThenGivesUp) {
  provider_.script = {std::unexpected(Http(503))};
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(provider_.requests.size(), 4u);
  EXPECT_EQ(sleeper_.DelaysMs(), (std::vector<std::int64_t>{2000, 4000, 8000}));
  EXPECT_EQ(result.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(result.error().message, "the provider is still failing after 3 retries: HTTP 503: boom 503");
  EXPECT_EQ(result.error().details.at("http_status"), 503);
  EXPECT_EQ(ctx_->attempts().size(), 4u);
  EXPECT_EQ(ctx_->metrics().transient_retries, 3);
}

TEST_F(RetryingProviderTest, JitterOnlyShortensByUpToAQuarter) {
  EXPECT_EQ(RetryingProvider::Backoff(policy_, 0, 0.0).count(), 2000);
  EXPECT_EQ(RetryingProvider::Backoff(policy_, 0, 0.999999).count(), 1500);
  EXPECT_EQ(RetryingProvider::Backoff(policy_, 1, 0.5).count(), 3500);
  EXPECT_EQ(RetryingProvider::Backoff(policy_, 5, 0.0).count(), 8000);  // capped at max_delay
}

TEST_F(RetryingProviderTest, PermanentErrorsAreNeverRetried) {
  for (int status : {400, 401, 403, 404, 413, 422}) {
    provider_.requests.clear();
    provider_.script = {std::unexpected(Http(status)), Ok()};
    auto result = Run();
    ASSERT_FALSE(result) << status;
    EXPECT_EQ(provider_.requests.size(), 1u) << status;
    EXPECT_EQ(result.error().code, ErrorCode::kProviderError);
    EXPECT_EQ(result.error().message,
              "the provider refused the request: HTTP " + std::to_string(status) + ": boom " + std::to_string(status));
    EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kProviderError);
  }
}

TEST_F(RetryingProviderTest, ServerDelayBeyondTheCapFailsAtOnce) {
  provider_.script = {std::unexpected(Http(429, milliseconds(3'600'000))), Ok()};
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(provider_.requests.size(), 1u);
  EXPECT_TRUE(sleeper_.DelaysMs().empty());
  EXPECT_EQ(result.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(result.error().message,
            "the provider asked to retry after 3600000 ms, more than max_server_delay_ms (60000): "
            "HTTP 429: boom 429");
  EXPECT_EQ(result.error().details.at("retry_after_ms"), 3600000);
}

TEST_F(RetryingProviderTest, XShouldRetryIsObeyed) {
  ProviderError no = Http(503);
  no.should_retry = false;
  provider_.script = {std::unexpected(no), Ok()};
  EXPECT_FALSE(Run());
  EXPECT_EQ(provider_.requests.size(), 1u);

  provider_.requests.clear();
  ProviderError yes = Http(400);
  yes.should_retry = true;
  provider_.script = {std::unexpected(yes), Ok()};
  EXPECT_TRUE(Run());
  EXPECT_EQ(provider_.requests.size(), 2u);
}

TEST_F(RetryingProviderTest, ConnectionFailuresAreTransient) {
  ProviderError dropped;
  dropped.kind = ProviderError::Kind::kNetwork;
  dropped.retryable = true;
  dropped.message = "connection closed before the response was complete";
  provider_.script = {std::unexpected(dropped), Ok()};
  auto result = Run();
  ASSERT_TRUE(result);
  EXPECT_EQ(ctx_->attempts()[0].errors[0].message, "connection closed before the response was complete");
  EXPECT_FALSE(ctx_->attempts()[0].http_status.has_value());
}

TEST_F(RetryingProviderTest, TheDeadlineBoundsTheWaits) {
  provider_.script = {std::unexpected(Http(503))};
  auto result = Run(0.0, milliseconds(5000));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(sleeper_.DelaysMs(), (std::vector<std::int64_t>{2000}));  // 2 s fits, 4 s does not
  EXPECT_EQ(result.error().message,
            "invocation timed out after 5000 ms: the provider failed (HTTP 503: boom 503) with no time left to retry");
  EXPECT_EQ(result.error().details.at("timeout_ms"), 5000);
  EXPECT_EQ(result.error().details.at("http_status"), 503);
}

TEST_F(RetryingProviderTest, APassedDeadlineSendsNothing) {
  provider_.script = {Ok()};
  auto result = Run(0.0, milliseconds(0));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(result.error().message, "the invocation deadline passed before the provider answered");
  EXPECT_TRUE(provider_.requests.empty());
}

TEST_F(RetryingProviderTest, MissingKeyIsConfigInvalidBeforeAnyRetry) {
  ProviderError config;
  config.kind = ProviderError::Kind::kConfig;
  config.message = "the environment variable OPENAI_API_KEY (the API key of provider \"openai\") is not set";
  provider_.script = {std::unexpected(config)};
  auto result = Run();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(result.error().message, config.message);
  EXPECT_EQ(provider_.requests.size(), 1u);
}

}  // namespace
}  // namespace skillrunner::providers
