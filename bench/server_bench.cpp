// The socket server under load (not a test). Starts the real `skillrunner
// serve` as its own process on a Unix socket and drives it from this one, so
// that the server's CPU (its own rusage) is apart from the load's:
//   1. for each io thread count of --threads (default 1,2):
//      a. invocations/s on the simulated provider (no latency) with 1, 64 and
//         1000 concurrent clients, each a connection with one request in
//         flight, and with 32 connections x 8 pipelined;
//      b. the same 32 x 8 through the OpenAI provider over loopback HTTP to
//         build/fake_openai_server (its own process, answering at once):
//         the HTTP client, the provider's limiter and its connection pool;
//      each with the server's CPU per invocation;
//   2. the server's peak resident memory (VmHWM) with 100,000 invocations
//      in flight at once against a simulated provider that answers after
//      20 s (1,000 connections x 100 pipelined requests; the latency is long
//      enough for a 2-core machine to have sent them all before the first
//      answer), per invocation in flight, and how long all the answers take.
//
//   build/server_bench [seconds-per-level [in-flight [connections [latency-ms]]]] [--threads N,M,...]
//                      [--upstream URL]   (the HTTP level against URL, e.g. nginx, instead of the fake server)
//   (seconds 0 skips the throughput levels; in-flight 0 skips the memory test; SKILLRUNNER_BIN=PATH serves with another
//   build)
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/serve_harness.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_tree.h"

namespace {
namespace asio = boost::asio;
using skillrunner::bench::FakeOpenAi;
using skillrunner::bench::Percentile;
using skillrunner::bench::ServeProcess;
using skillrunner::bench::WaitForSocket;
using skillrunner::bench::WriteTree;
using Clock = std::chrono::steady_clock;
using local = asio::local::stream_protocol;

std::string Invoke(std::uint64_t id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"skills.invoke","params":{"skill":"triage","input":{"text":"The invoice total is wrong"}}})"
         "\n";
}

struct Totals {
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> errors{0};
  std::vector<double> latencies_us;  // guarded by the single client io thread
};

// One client: request, wait for the answer, repeat until `until`.
asio::awaitable<void> Client(std::string path, Clock::time_point until, Totals& totals) {
  auto executor = co_await asio::this_coro::executor;
  local::socket socket(executor);
  auto [connect_ec] = co_await socket.async_connect(local::endpoint(path), asio::as_tuple(asio::use_awaitable));
  if (connect_ec) {
    ++totals.errors;
    co_return;
  }
  std::string buffer;
  std::uint64_t id = 0;
  while (Clock::now() < until) {
    std::string request = Invoke(++id);
    auto start = Clock::now();
    auto [write_ec, w] = co_await asio::async_write(socket, asio::buffer(request), asio::as_tuple(asio::use_awaitable));
    auto [read_ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n',
                                                        asio::as_tuple(asio::use_awaitable));
    if (write_ec || read_ec) {
      ++totals.errors;
      co_return;
    }
    if (buffer.find("\"result\"") == std::string::npos || buffer.find("\"result\"") > n) ++totals.errors;
    buffer.erase(0, n);
    totals.latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    ++totals.done;
  }
}

// What clients did in one measurement: invocations answered, their rate and the server's CPU for each.
struct Measured {
  double done = 0;
  double per_second = 0;
  double cpu_us = 0;
};

// Runs the clients `spawn` starts on a fresh io_context (each until the time it is given) to their end.
template <class Spawn>
Measured Measure(const ServeProcess& server, const Totals& totals, double seconds, Spawn spawn) {
  asio::io_context io;
  auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  double cpu_before = server.CpuSeconds();
  auto start = Clock::now();
  spawn(io, until);
  io.run();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = server.CpuSeconds() - cpu_before;
  double done = static_cast<double>(totals.done.load());
  return {done, done / wall, done > 0 ? cpu / done * 1e6 : 0.0};
}

void Throughput(const std::string& path, const ServeProcess& server, int clients, double seconds) {
  Totals totals;
  Measured m = Measure(server, totals, seconds, [&](asio::io_context& io, Clock::time_point until) {
    for (int i = 0; i < clients; ++i) asio::co_spawn(io, Client(path, until, totals), asio::detached);
  });
  std::printf(
      "clients=%-5d invocations=%-8.0f %9.0f/s  p50 %7.0f us  p99 %7.0f us  server CPU %.1f us/invocation  RSS %ld MiB "
      " errors %llu\n",
      clients, m.done, m.per_second, Percentile(totals.latencies_us, 0.5), Percentile(totals.latencies_us, 0.99),
      m.cpu_us, server.RssKiB() / 1024, static_cast<unsigned long long>(totals.errors.load()));
}

// One connection with `depth` requests in flight: each answer read sends the
// next request, until `until`; then it reads what is still in flight.
asio::awaitable<void> PipelinedClient(std::string path, std::size_t depth, Clock::time_point until, Totals& totals) {
  local::socket socket(co_await asio::this_coro::executor);
  auto [connect_ec] = co_await socket.async_connect(local::endpoint(path), asio::as_tuple(asio::use_awaitable));
  if (connect_ec) {
    ++totals.errors;
    co_return;
  }
  std::uint64_t id = 0;
  std::string batch;
  for (std::size_t i = 0; i < depth; ++i) batch += Invoke(++id);
  std::string buffer;
  std::size_t in_flight = depth;
  auto [write_ec, w] = co_await asio::async_write(socket, asio::buffer(batch), asio::as_tuple(asio::use_awaitable));
  while (!write_ec && in_flight > 0) {
    auto [read_ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n',
                                                        asio::as_tuple(asio::use_awaitable));
    if (read_ec) break;
    if (buffer.find("\"result\"") > n) ++totals.errors;
    buffer.erase(0, n);
    ++totals.done;
    --in_flight;
    if (Clock::now() >= until) continue;
    std::string request = Invoke(++id);
    std::tie(write_ec, w) =
        co_await asio::async_write(socket, asio::buffer(request), asio::as_tuple(asio::use_awaitable));
    ++in_flight;
  }
  if (in_flight > 0) ++totals.errors;
}

void Pipelined(const std::string& label, const std::string& path, const ServeProcess& server, std::size_t connections,
               std::size_t depth, double seconds) {
  Totals totals;
  Measured m = Measure(server, totals, seconds, [&](asio::io_context& io, Clock::time_point until) {
    for (std::size_t i = 0; i < connections; ++i)
      asio::co_spawn(io, PipelinedClient(path, depth, until, totals), asio::detached);
  });
  std::printf(
      "%-9s %zu connections x %zu pipelined: invocations=%-8.0f %9.0f/s  server CPU %.1f us/invocation  "
      "errors %llu\n",
      label.c_str(), connections, depth, m.done, m.per_second, m.cpu_us,
      static_cast<unsigned long long>(totals.errors.load()));
}

// The server's count of invocations in flight, asked over a connection of
// its own (0 when it cannot tell).
long ServerInFlight(local::socket& socket) {
  const std::string ask = R"({"jsonrpc":"2.0","id":0,"method":"metrics"})"
                          "\n";
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(ask), ec);
  std::string answer;
  if (!ec) asio::read_until(socket, asio::dynamic_buffer(answer), '\n', ec);
  const std::string key = "\"in_flight\":";
  auto at = answer.rfind(key);
  return ec || at == std::string::npos ? 0 : std::atol(answer.c_str() + at + key.size());
}

// One connection of the in-flight test: writes its `share` of requests at
// once, then reads as many answers.
asio::awaitable<void> Pipelined(std::string path, std::size_t first_id, std::size_t share,
                                std::atomic<std::uint64_t>& answered, std::atomic<std::uint64_t>& errors) {
  local::socket socket(co_await asio::this_coro::executor);
  co_await socket.async_connect(local::endpoint(path), asio::use_awaitable);
  std::string batch;
  for (std::size_t i = 0; i < share; ++i) batch += Invoke(first_id + i);
  co_await asio::async_write(socket, asio::buffer(batch), asio::use_awaitable);
  std::string buffer;
  for (std::size_t i = 0; i < share; ++i) {
    std::size_t n = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n', asio::use_awaitable);
    if (!std::string_view(buffer).substr(0, n).starts_with(R"({"jsonrpc":"2.0","id":)") ||
        buffer.find("\"result\"") > n) {
      ++errors;
    }
    buffer.erase(0, n);
    ++answered;
  }
}

// `connections` connections, each writes its share of `total` requests at
// once and then reads as many answers. The memory an invocation in flight
// holds: the server's peak resident memory (VmHWM) less its idle memory,
// over the most invocations it had in flight at once (asked of its
// `metrics` method every 100 ms).
void InFlight(const std::string& path, const ServeProcess& server, int latency_ms, std::size_t total,
              std::size_t connections) {
  asio::io_context io;
  std::atomic<std::uint64_t> answered{0};
  std::atomic<std::uint64_t> errors{0};
  const long idle_rss = server.RssKiB();
  auto start = Clock::now();
  for (std::size_t c = 0, first = 0; c < connections; ++c) {
    const std::size_t share = total / connections + (c < total % connections ? 1 : 0);
    asio::co_spawn(io, Pipelined(path, first, share, answered, errors), [&](std::exception_ptr e) {
      if (e) ++errors;
    });
    first += share;
  }
  long peak_in_flight = 0;
  std::thread sampler([&] {
    asio::io_context sampler_io;
    local::socket metrics(sampler_io);
    boost::system::error_code ec;
    metrics.connect(local::endpoint(path), ec);
    while (!ec && answered.load() + errors.load() < total && Clock::now() - start < std::chrono::seconds(180)) {
      peak_in_flight = std::max(peak_in_flight, ServerInFlight(metrics));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  io.run();
  sampler.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const long peak_rss = server.PeakRssKiB();
  std::printf(
      "%zu in flight on %zu connections (provider answers after %d ms): %ld in flight at once at most%s; "
      "server RSS idle %ld MiB, peak %ld MiB: %.1f KiB per invocation in flight; %llu answered in %.2f s, "
      "errors %llu\n",
      total, connections, latency_ms, peak_in_flight,
      static_cast<std::size_t>(peak_in_flight) < total ? " (raise latency-ms to have them all at once)" : "",
      idle_rss / 1024, peak_rss / 1024,
      peak_in_flight > 0 ? static_cast<double>(peak_rss - idle_rss) / static_cast<double>(peak_in_flight) : 0.0,
      static_cast<unsigned long long>(answered.load()), wall, static_cast<unsigned long long>(errors.load()));
}

// The HTTP level against this server instead of fake_openai_server (--upstream URL: nginx answering a
// fixed chat.completion, bench/nginx_upstream_bench.sh).
std::string g_upstream;

// The HTTP level: 32 x 8 pipelined through the OpenAI provider.
void HttpLevel(double seconds, unsigned threads) {
  constexpr std::size_t kConnections = 32, kDepth = 8;
  skillrunner::testing::TempTree tree;
  std::optional<FakeOpenAi> fake;
  if (g_upstream.empty()) fake.emplace(tree);
  WriteTree(tree, 0, fake ? fake->url() : g_upstream);
  std::string socket = tree.Path("s.sock").string();
  ServeProcess server(tree, socket, 20000, threads);
  WaitForSocket(socket);
  Pipelined(g_upstream.empty() ? "HTTP" : "upstream", socket, server, kConnections, kDepth, seconds);
}

// The throughput levels at `threads` io threads (0: serve's default).
void ThroughputLevels(double seconds, unsigned threads) {
  constexpr std::size_t kConnections = 32, kDepth = 8;
  std::printf("serve --threads %s:\n", threads > 0 ? std::to_string(threads).c_str() : "(default)");
  {
    skillrunner::testing::TempTree tree;
    WriteTree(tree, 0);
    std::string socket = tree.Path("s.sock").string();
    ServeProcess server(tree, socket, 20000, threads);
    WaitForSocket(socket);
    std::printf("skills.invoke on the simulated provider (no latency), one request in flight per client:\n");
    for (int clients : {1, 64, 1000}) Throughput(socket, server, clients, seconds);
    Pipelined("simulated", socket, server, kConnections, kDepth, seconds);
  }
  HttpLevel(seconds, threads);
}

std::vector<unsigned> ParseThreads(const std::string& list) {
  std::vector<unsigned> threads;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) threads.push_back(static_cast<unsigned>(std::stoul(item)));
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  std::vector<unsigned> threads{1, 2};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--threads" && i + 1 < argc) {
      threads = ParseThreads(argv[++i]);
    } else if (std::string(argv[i]) == "--upstream" && i + 1 < argc) {
      g_upstream = argv[++i];
    } else {
      positional.emplace_back(argv[i]);
    }
  }
  double seconds = positional.size() > 0 ? std::stod(positional[0]) : 5.0;
  std::size_t in_flight = positional.size() > 1 ? std::stoul(positional[1]) : 100000;
  std::size_t connections = positional.size() > 2 ? std::stoul(positional[2]) : 1000;
  int latency_ms = positional.size() > 3 ? std::stoi(positional[3]) : 20000;
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);  // 1000 clients on each side; the server inherits it
  if (files.rlim_cur < 2 * connections + 64) {
    std::fprintf(stderr, "RLIMIT_NOFILE %llu is too low for %zu connections\n",
                 static_cast<unsigned long long>(files.rlim_cur), connections);
    return 1;
  }
  if (seconds > 0) {
    for (unsigned t : threads) ThroughputLevels(seconds, t);
  }
  if (in_flight > 0) {
    skillrunner::testing::TempTree tree;
    WriteTree(tree, latency_ms);
    std::string socket = tree.Path("s.sock").string();
    // The bench raises the server's limit; the per-connection one (1024)
    // already holds 100 per connection.
    ServeProcess server(tree, socket, in_flight + 1000);
    WaitForSocket(socket);
    InFlight(socket, server, latency_ms, in_flight, connections);
  }
  return 0;
}
