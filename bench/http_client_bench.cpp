// Round trips per second and latency of HttpClient against the loopback
// server (keep-alive, ~600-byte OpenAI-like JSON answer, no delay).
//   http_client_bench [requests=20000] [client_threads=1]
// The server runs on its own thread in the same process, so CPU figures
// include it.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "services/http/http_client.h"
#include "tests/support/loopback_server.h"

namespace {

namespace asio = boost::asio;
using namespace skillrunner;
using Clock = std::chrono::steady_clock;

constexpr const char* kBody =
    R"({"id":"chatcmpl-9zYx3bench","object":"chat.completion","created":1732233600,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant",)"
    R"("content":"{\"name\":\"Ada Lovelace\",\"email\":\"ada@example.com\",\"phone\":\"+44 20 7946 0958\",)"
    R"(\"company\":\"Analytical Engines Ltd\",\"title\":\"Chief Mathematician\"}","refusal":null},)"
    R"("logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":182,"completion_tokens":41,)"
    R"("total_tokens":223,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},)"
    R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}},)"
    R"("system_fingerprint":"fp_0ba0d124f1","service_tier":"default"})";

constexpr const char* kRequestBody = R"({"model":"gpt-4o-mini","temperature":0.7,"max_tokens":1024,"messages":[)"
                                     R"({"role":"system","content":"You extract contact records."},)"
                                     R"({"role":"user","content":"Text: Ada Lovelace, ada@example.com"}]})";

struct Shared {
  std::shared_ptr<http::HttpClient> client;
  http::HttpRequest request;
  int total = 0;
  int next = 0;  // one client thread by default; guarded below when more
  int failures = 0;
  std::vector<double> latencies_us;
  std::mutex mutex;
};

asio::awaitable<void> Worker(Shared* shared) {
  for (;;) {
    int n;
    {
      std::lock_guard lock(shared->mutex);
      n = shared->next++;
    }
    if (n >= shared->total) co_return;
    auto start = Clock::now();
    auto result = co_await shared->client->Send(shared->request);
    double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    std::lock_guard lock(shared->mutex);
    if (!result || result->status != 200) {
      if (shared->failures++ == 0 && !result) {
        std::fprintf(stderr, "first failure: %s\n", result.error().message.c_str());
      }
    }
    shared->latencies_us[static_cast<std::size_t>(n)] = us;
  }
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void Run(const std::string& url, int concurrency, int total, int threads) {
  asio::io_context io(threads);
  http::HttpClientOptions options;
  options.max_connections_per_host = 64;
  Shared shared;
  shared.client = http::MakeHttpClient(io.get_executor(), options);
  shared.request.url = url + "/v1/chat/completions";
  shared.request.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer sk-bench"}};
  shared.request.body = kRequestBody;
  shared.total = total;
  shared.latencies_us.assign(static_cast<std::size_t>(total), 0.0);

  auto start = Clock::now();
  double cpu_start = CpuSeconds();
  for (int i = 0; i < concurrency; ++i) {
    asio::co_spawn(io, Worker(&shared), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  }
  std::vector<std::thread> extra;
  for (int i = 1; i < threads; ++i) extra.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : extra) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = CpuSeconds() - cpu_start;
  shared.client.reset();

  std::vector<double>& lat = shared.latencies_us;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) { return lat[static_cast<std::size_t>(p * (lat.size() - 1))]; };
  std::printf("| %11d | %8d | %9.0f | %8.1f | %8.1f | %8.1f | %13.1f | %8d |\n", concurrency, total, total / seconds,
              pct(0.50), pct(0.99), pct(0.999), cpu * 1e6 / total, shared.failures);
}

}  // namespace

int main(int argc, char** argv) {
  int total = argc > 1 ? std::atoi(argv[1]) : 20'000;
  int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  test_support::LoopbackServer server;
  server.SetRecording(false);
  server.SetDefault({.body = kBody});
  std::printf("http_client_bench: %d requests per row, %d client thread(s), body %zu bytes\n", total, threads,
              std::string(kBody).size());
  std::printf("| concurrency | requests | req/s     | p50 us   | p99 us   | p99.9 us | CPU us/req*   | failures |\n");
  std::printf("|-------------|----------|-----------|----------|----------|----------|---------------|----------|\n");
  Run(server.base_url(), 1, std::min(total, 2'000), threads);  // warm-up, also printed
  Run(server.base_url(), 1, total, threads);
  Run(server.base_url(), 64, total, threads);
  std::printf("* process CPU (client and loopback server together) per request\n");
  return 0;
}
