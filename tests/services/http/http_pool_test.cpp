// Connection reuse, the per-host cap and its FIFO queue, cancellation and
// concurrency of the HTTP client, against the loopback server.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <variant>

#include "services/http/http_client.h"
#include "tests/services/http/http_test_util.h"
#include "tests/support/loopback_server.h"

namespace skillrunner::http {
namespace {

using namespace http_testing;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using test_support::LoopbackServer;
using test_support::ScriptedResponse;

// The first request's connection is closed by the server once idle; the
// second request must not fail because of it.
asio::awaitable<std::vector<Result>> SendAfterServerClosesIdle(std::string url, LoopbackServer* server) {
  auto executor = co_await asio::this_coro::executor;
  auto client = MakeHttpClient(executor);
  HttpRequest request = Get(url);
  Result first = co_await client->Send(request);
  EXPECT_TRUE(server->WaitForClosedConnections(1, 5s));
  Result second = co_await client->Send(request);
  co_return std::vector<Result>{first, second};
}

TEST(HttpPoolTest, ConnectionClosedByServerWhileIdleIsReplaced) {
  LoopbackServer server;
  server.Enqueue({.body = "first", .close_after_response = true});
  server.Enqueue({.body = "second"});

  auto results = test_support::RunAwaitable(SendAfterServerClosesIdle(server.base_url(), &server));

  ASSERT_TRUE(results[0]) << results[0].error().message;
  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->body, "second");
  EXPECT_EQ(server.connections_accepted(), 2);
}

TEST(HttpPoolTest, PooledConnectionThatDiesOnReuseIsRetriedOnceOnANewOne) {
  LoopbackServer server;
  server.Enqueue({.body = "first"});
  server.Enqueue({.drop_connection = true});  // the keep-alive race: closed, never answered
  server.Enqueue({.body = "second"});
  std::vector<HttpRequest> requests{Get(server.base_url() + "/"), Get(server.base_url() + "/")};

  auto results = SendSequentially({}, requests);

  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->body, "second");
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(server.connections_accepted(), 2);
}

TEST(HttpPoolTest, RetryAfterTheRaceHappensOnlyOnce) {
  LoopbackServer server;
  server.Enqueue({.body = "first"});
  server.Enqueue({.drop_connection = true});
  server.Enqueue({.drop_connection = true});
  std::vector<HttpRequest> requests{Get(server.base_url() + "/"), Get(server.base_url() + "/")};

  auto results = SendSequentially({}, requests);

  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().kind, HttpErrorKind::kDropped);
  EXPECT_EQ(server.request_count(), 3u);
}

struct Completion {
  std::mutex mutex;
  std::vector<int> order;
  int succeeded = 0;
};

asio::awaitable<void> SendNumbered(std::shared_ptr<HttpClient> client, std::string url, int n, Completion* completion) {
  HttpRequest request = Post(url, std::to_string(n));
  Result result = co_await client->Send(request);
  std::lock_guard lock(completion->mutex);
  completion->order.push_back(n);
  if (result) ++completion->succeeded;
}

TEST(HttpPoolTest, RequestsBeyondTheCapQueueInArrivalOrder) {
  LoopbackServer server;
  server.SetDefault({.body = "{}", .delay = 100ms});
  asio::io_context io;
  HttpClientOptions options;
  options.max_connections_per_host = 2;
  auto client = MakeHttpClient(io.get_executor(), options);
  Completion completion;

  for (int n = 0; n < 6; ++n) {
    asio::co_spawn(io, SendNumbered(client, server.base_url(), n, &completion), RethrowIfFailed);
  }
  io.run();

  EXPECT_EQ(completion.succeeded, 6);
  EXPECT_EQ(server.connections_accepted(), 2);
  EXPECT_LE(server.max_open_connections(), 2);
  // Slots pass to waiters oldest first, so the server sees the requests in
  // pairs: {0,1}, then {2,3}, then {4,5}.
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 6u);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(std::stoi(requests[i].body) / 2, static_cast<int>(i) / 2) << "position " << i;
  }
}

asio::awaitable<std::vector<Result>> QueueBehindSlowRequest(std::string url) {
  auto executor = co_await asio::this_coro::executor;
  HttpClientOptions options;
  options.max_connections_per_host = 1;
  auto client = MakeHttpClient(executor, options);
  HttpRequest slow = Get(url + "/slow");
  HttpRequest queued = Get(url + "/queued");
  queued.timeout = 200ms;
  // The slow one holds the only slot; the queued one times out waiting.
  auto both = client->Send(slow) && client->Send(queued);
  auto [slow_result, queued_result] = co_await std::move(both);
  HttpRequest after = Get(url + "/after");
  Result after_result = co_await client->Send(after);
  co_return std::vector<Result>{slow_result, queued_result, after_result};
}

TEST(HttpPoolTest, TimeoutWhileQueuedReleasesTheQueueSlot) {
  LoopbackServer server;
  server.Enqueue({.body = "slow", .delay = 1s});
  server.SetDefault({.body = "fast"});

  auto results = test_support::RunAwaitable(QueueBehindSlowRequest(server.base_url()));

  ASSERT_TRUE(results[0]) << results[0].error().message;
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().kind, HttpErrorKind::kTimeout);
  ASSERT_TRUE(results[2]) << results[2].error().message;
  EXPECT_EQ(results[2]->body, "fast");
  EXPECT_EQ(server.request_count(), 2u);  // the queued request never reached the wire
}

asio::awaitable<std::vector<Result>> CancelWhileQueued(std::string url) {
  auto executor = co_await asio::this_coro::executor;
  HttpClientOptions options;
  options.max_connections_per_host = 1;
  auto client = MakeHttpClient(executor, options);
  HttpRequest slow = Get(url + "/slow");
  HttpRequest queued = Get(url + "/queued");
  asio::steady_timer timer(executor, 100ms);
  // The queued request loses its race while waiting for the only slot.
  auto queued_race = client->Send(queued) || timer.async_wait(asio::use_awaitable);
  auto both = client->Send(slow) && std::move(queued_race);
  auto [slow_result, race] = co_await std::move(both);
  EXPECT_EQ(race.index(), 1u);
  HttpRequest after = Get(url + "/after");
  Result after_result = co_await client->Send(after);
  co_return std::vector<Result>{slow_result, after_result};
}

TEST(HttpPoolTest, CancellationWhileQueuedLeavesTheQueue) {
  LoopbackServer server;
  server.Enqueue({.body = "slow", .delay = 500ms});
  server.SetDefault({.body = "after"});

  auto results = test_support::RunAwaitable(CancelWhileQueued(server.base_url()));

  ASSERT_TRUE(results[0]) << results[0].error().message;
  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->body, "after");
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].target, "/after");
  EXPECT_EQ(server.connections_accepted(), 1);  // the slot and its connection were reused
}

struct RaceOutcome {
  std::size_t winner = 99;
  long long elapsed_ms = 0;
  Result after = std::unexpected(HttpError{});
};

asio::awaitable<RaceOutcome> LoseARaceThenSendAgain(std::string url) {
  auto executor = co_await asio::this_coro::executor;
  auto client = MakeHttpClient(executor);
  asio::steady_timer timer(executor, 100ms);
  RaceOutcome outcome;
  auto start = Clock::now();
  HttpRequest slow = Get(url + "/slow");
  auto race = client->Send(slow) || timer.async_wait(asio::use_awaitable);
  auto winner = co_await std::move(race);
  outcome.winner = winner.index();
  outcome.elapsed_ms = MillisSince(start);
  HttpRequest after = Get(url + "/after");
  outcome.after = co_await client->Send(after);
  co_return outcome;
}

TEST(HttpPoolTest, CancelledRequestEndsPromptlyAndClosesItsConnection) {
  LoopbackServer server;
  server.Enqueue({.body = "slow", .delay = 5s});
  server.SetDefault({.body = "after"});

  RaceOutcome outcome = test_support::RunAwaitable(LoseARaceThenSendAgain(server.base_url()));

  EXPECT_EQ(outcome.winner, 1u);
  EXPECT_LT(outcome.elapsed_ms, 3'000);
  EXPECT_TRUE(server.WaitForClosedConnections(1, 3s)) << "the cancelled connection stays open";
  ASSERT_TRUE(outcome.after) << outcome.after.error().message;
  EXPECT_EQ(outcome.after->body, "after");
  EXPECT_EQ(server.connections_accepted(), 2);
}

TEST(HttpPoolTest, CancellationSignalEndsTheRequestWithCancelled) {
  LoopbackServer server;
  server.Enqueue({.body = "slow", .delay = 5s});
  asio::io_context io;
  auto client = MakeHttpClient(io.get_executor());
  asio::cancellation_signal signal;
  std::future<Result> future = asio::co_spawn(io, client->Send(Get(server.base_url() + "/")),
                                              asio::bind_cancellation_slot(signal.slot(), asio::use_future));
  asio::steady_timer timer(io, 100ms);
  timer.async_wait([&](boost::system::error_code) { signal.emit(asio::cancellation_type::all); });

  auto start = Clock::now();
  io.run();
  Result result = future.get();

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kCancelled);
  EXPECT_EQ(result.error().message, "request cancelled");
  EXPECT_LT(MillisSince(start), 3'000);
  EXPECT_TRUE(server.WaitForClosedConnections(1, 3s));
}

asio::awaitable<void> Worker(std::shared_ptr<HttpClient> client, std::string url, std::atomic<int>* next,
                             std::atomic<int>* succeeded, int total) {
  for (int n = (*next)++; n < total; n = (*next)++) {
    HttpRequest request = Post(url, std::to_string(n));
    Result result = co_await client->Send(request);
    if (result && result->status == 200 && result->body == "{\"ok\":1}") ++*succeeded;
  }
}

TEST(HttpPoolTest, TwoHundredRequestsFromSixtyFourCoroutinesOnTwoThreads) {
  LoopbackServer server;
  server.SetDefault({.body = "{\"ok\":1}"});
  server.SetRecording(false);
  asio::io_context io(2);
  HttpClientOptions options;
  options.max_connections_per_host = 16;
  auto client = MakeHttpClient(io.get_executor(), options);
  std::atomic<int> next{0};
  std::atomic<int> succeeded{0};

  // Each on a strand: the client's contract for an io_context run by several threads.
  for (int i = 0; i < 64; ++i) {
    asio::co_spawn(asio::make_strand(io), Worker(client, server.base_url(), &next, &succeeded, 200), RethrowIfFailed);
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();

  EXPECT_EQ(succeeded.load(), 200);
  EXPECT_EQ(server.request_count(), 200u);
  EXPECT_LE(server.connections_accepted(), 16);
}

// A request runs where it is awaited: the client's own executor (here an
// io_context nobody runs) is not in its way, so `serve`'s io threads, an
// io_context each, never hop to another thread for a request.
TEST(HttpPoolTest, RequestRunsOnTheCallersIoContextNotTheClients) {
  LoopbackServer server;
  server.SetDefault({.body = "{\"ok\":1}"});
  asio::io_context idle;
  asio::io_context io;
  auto client = MakeHttpClient(idle.get_executor());
  auto future = asio::co_spawn(io, client->Send(Get(server.base_url() + "/a")), asio::use_future);
  io.run_for(5s);
  ASSERT_EQ(future.wait_for(0s), std::future_status::ready) << "the request waited for the client's io_context";
  Result result = future.get();
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->body, "{\"ok\":1}");
}

// Pooled connections stay on the io_context that opened them: a request on
// another one opens its own, and each context reuses its own afterwards.
TEST(HttpPoolTest, PooledConnectionsAreReusedOnlyOnTheirOwnIoContext) {
  LoopbackServer server;
  server.SetDefault({.body = "{\"ok\":1}"});
  asio::io_context first;
  asio::io_context second;
  auto client = MakeHttpClient(first.get_executor());
  auto send_on = [&](asio::io_context& io) {
    auto future = asio::co_spawn(io, client->Send(Get(server.base_url() + "/a")), asio::use_future);
    io.restart();
    io.run_for(5s);
    EXPECT_EQ(future.wait_for(0s), std::future_status::ready);
    Result result = future.get();
    EXPECT_TRUE(result && result->status == 200);
  };
  send_on(first);
  send_on(second);
  EXPECT_EQ(server.connections_accepted(), 2);
  send_on(first);
  send_on(second);
  send_on(second);
  EXPECT_EQ(server.connections_accepted(), 2);
  EXPECT_EQ(server.request_count(), 5u);
}

// At the cap, a request on a context with no idle connection of its own
// closes another context's idle one instead of waiting for it.
TEST(HttpPoolTest, AtTheCapAnotherContextsIdleConnectionMakesRoom) {
  LoopbackServer server;
  server.SetDefault({.body = "{\"ok\":1}"});
  asio::io_context first;
  asio::io_context second;
  HttpClientOptions options;
  options.max_connections_per_host = 1;
  auto client = MakeHttpClient(first.get_executor(), options);
  for (asio::io_context* io : {&first, &second, &first}) {
    auto future = asio::co_spawn(*io, client->Send(Get(server.base_url() + "/a")), asio::use_future);
    io->restart();
    io->run_for(5s);
    ASSERT_EQ(future.wait_for(0s), std::future_status::ready);
    Result result = future.get();
    ASSERT_TRUE(result) << result.error().message;
  }
  EXPECT_EQ(server.connections_accepted(), 3);
  EXPECT_TRUE(server.WaitForClosedConnections(2, 5s));
}

}  // namespace
}  // namespace skillrunner::http
