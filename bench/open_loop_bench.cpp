// serve's added latency, open loop (not a test). Calls go out on a fixed
// schedule whatever the answers do, and each call's latency counts from the
// time it was due, so a slow answer hides no later one (no coordinated
// omission). serve runs the triage skill over the OpenAI provider against
// build/fake_openai_server (answering at once, its own process); the same
// schedule sent straight to the fake server over HTTP gives the fake's own
// latency, and the difference is what serve adds. Each rate also gives serve's
// CPU per call (its own rusage).
//
// Variants: `plain` (the skill alone), `rollout` (a candidate at traffic 0.5:
// the assignment and counting on every call), `review` (that, and every
// answer judged online by a judge answering in 50 ms: what judging after the
// answer costs the calls).
//
//   build/open_loop_bench [seconds-per-rate [rates [connections [variants]]]]
//                         (default 5 1000,5000 32 plain,rollout,review)
#include <sys/resource.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <memory>

#include "bench/serve_harness.h"

namespace {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using skillrunner::bench::FakeOpenAi;
using skillrunner::bench::Percentile;
using skillrunner::bench::ServeProcess;

// When each call was due, and what came back.
struct Run {
  std::vector<Clock::time_point> due;
  std::vector<double> latency_us;
  std::size_t errors = 0;
  std::size_t late_sends = 0;  // written more than 1 ms after they were due: the load generator fell behind
};

std::string InvokeLine(std::size_t id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"skills.invoke","params":{"skill":"triage","input":{"text":"The invoice total is wrong"}}})"
         "\n";
}

std::string HttpRequest() {
  const std::string body =
      R"({"model":"m","messages":[{"role":"user","content":"Ticket: The invoice total is wrong"}]})";
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Authorization: Bearer sk-bench\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

void Record(Run& run, std::size_t id, bool ok) {
  if (!ok || id >= run.due.size()) {
    ++run.errors;
    return;
  }
  run.latency_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - run.due[id]).count());
}

// One connection to serve: reads answer lines, each naming its call by id.
asio::awaitable<void> ReadAnswers(asio::local::stream_protocol::socket& socket, std::size_t expected, Run& run) {
  std::string buffer;
  for (std::size_t i = 0; i < expected; ++i) {
    auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n',
                                                   asio::as_tuple(asio::use_awaitable));
    if (ec) {
      run.errors += expected - i;
      co_return;
    }
    const std::size_t at = buffer.find("\"id\":");
    const std::size_t id = at < n ? std::strtoull(buffer.c_str() + at + 5, nullptr, 10) : run.due.size();
    Record(run, id, buffer.find("\"result\"") < n);
    buffer.erase(0, n);
  }
}

// One connection to the fake server: HTTP/1.1 answers come in the order of the requests.
asio::awaitable<void> ReadHttpAnswers(asio::ip::tcp::socket& socket, std::deque<std::size_t>& ids, std::size_t expected,
                                      Run& run) {
  std::string buffer;
  for (std::size_t i = 0; i < expected; ++i) {
    auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), "\r\n\r\n",
                                                   asio::as_tuple(asio::use_awaitable));
    if (ec) {
      run.errors += expected - i;
      co_return;
    }
    const std::size_t at = buffer.find("Content-Length: ");
    const std::size_t length = at < n ? std::strtoull(buffer.c_str() + at + 16, nullptr, 10) : 0;
    if (buffer.size() < n + length) {
      auto [body_ec, unused] = co_await asio::async_read(socket, asio::dynamic_buffer(buffer),
                                                         asio::transfer_exactly(n + length - buffer.size()),
                                                         asio::as_tuple(asio::use_awaitable));
      if (body_ec) ++run.errors;
    }
    const bool ok = buffer.starts_with("HTTP/1.1 200");
    buffer.erase(0, n + length);
    Record(run, ids.front(), ok);
    ids.pop_front();
  }
}

// Writes call i when it is due, on connection i mod N, whatever the answers do.
template <class Socket, class Line>
asio::awaitable<void> SendOnSchedule(std::vector<Socket*> sockets, double rate, Run& run, Line line,
                                     std::vector<std::deque<std::size_t>>* ids) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(50);
  for (std::size_t i = 0; i < run.due.size(); ++i) {
    run.due[i] = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate));
    if (run.due[i] > Clock::now()) {
      timer.expires_at(run.due[i]);
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (Clock::now() - run.due[i] > std::chrono::milliseconds(1)) ++run.late_sends;
    const std::size_t c = i % sockets.size();
    if (ids != nullptr) (*ids)[c].push_back(i);
    const std::string text = line(i);
    auto [ec, n] = co_await asio::async_write(*sockets[c], asio::buffer(text), asio::as_tuple(asio::use_awaitable));
    if (ec) ++run.errors;
  }
}

std::size_t Share(std::size_t total, std::size_t parts, std::size_t part) {
  return total / parts + (part < total % parts ? 1 : 0);
}

Run ThroughServe(const std::string& path, double rate, double seconds, std::size_t connections) {
  asio::io_context io;
  Run run;
  run.due.resize(static_cast<std::size_t>(rate * seconds));
  std::vector<std::unique_ptr<asio::local::stream_protocol::socket>> owned;
  std::vector<asio::local::stream_protocol::socket*> sockets;
  for (std::size_t c = 0; c < connections; ++c) {
    owned.push_back(std::make_unique<asio::local::stream_protocol::socket>(io));
    owned.back()->connect(asio::local::stream_protocol::endpoint(path));
    sockets.push_back(owned.back().get());
    asio::co_spawn(io, ReadAnswers(*sockets.back(), Share(run.due.size(), connections, c), run), asio::detached);
  }
  asio::co_spawn(io, SendOnSchedule(sockets, rate, run, InvokeLine, nullptr), asio::detached);
  io.run();
  return run;
}

Run StraightToFake(const std::string& url, double rate, double seconds, std::size_t connections) {
  asio::io_context io;
  Run run;
  run.due.resize(static_cast<std::size_t>(rate * seconds));
  const auto port = static_cast<unsigned short>(std::stoi(url.substr(url.rfind(':') + 1)));
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> owned;
  std::vector<asio::ip::tcp::socket*> sockets;
  std::vector<std::deque<std::size_t>> ids(connections);
  for (std::size_t c = 0; c < connections; ++c) {
    owned.push_back(std::make_unique<asio::ip::tcp::socket>(io));
    owned.back()->connect({asio::ip::make_address("127.0.0.1"), port});
    owned.back()->set_option(asio::ip::tcp::no_delay(true));
    sockets.push_back(owned.back().get());
    asio::co_spawn(io, ReadHttpAnswers(*sockets.back(), ids[c], Share(run.due.size(), connections, c), run),
                   asio::detached);
  }
  const std::string request = HttpRequest();
  asio::co_spawn(io,
                 SendOnSchedule(
                     sockets, rate, run, [&](std::size_t) { return request; }, &ids),
                 asio::detached);
  io.run();
  return run;
}

void Print(const char* label, Run& run) {
  std::printf("  %-14s p50 %7.0f us  p99 %7.0f us  p99.9 %7.0f us  answered %zu  errors %zu  late sends %zu\n", label,
              Percentile(run.latency_us, 0.5), Percentile(run.latency_us, 0.99), Percentile(run.latency_us, 0.999),
              run.latency_us.size(), run.errors, run.late_sends);
}

// One way of serving the triage skill: its own tree and serve process.
struct Variant {
  const char* name;
  std::string rollout;  // the skill's rollout block ("" for none)
  bool judged = false;  // an online review by a judge that answers in 50 ms
};

// serve's latency and CPU per call at `rate` for one variant, against `alone` (the fake by itself).
void Measure(const Variant& variant, const std::string& fake_url, const std::string& judge_url, double rate,
             double seconds, std::size_t connections, Run& alone) {
  skillrunner::testing::TempTree tree;
  skillrunner::bench::WriteTree(tree, 0, fake_url, variant.rollout, variant.judged ? judge_url : "");
  const std::string socket = tree.Path("s.sock").string();
  ServeProcess server(tree, socket, 100000);
  skillrunner::bench::WaitForSocket(socket);
  ThroughServe(socket, 1000, 1, connections);  // warm: connections to the fake server, caches
  const double cpu_before = server.CpuSeconds();
  Run served = ThroughServe(socket, rate, seconds, connections);
  const double cpu_us = (server.CpuSeconds() - cpu_before) / static_cast<double>(served.due.size()) * 1e6;
  std::printf("  %s (serve's CPU %.1f us a call):\n", variant.name, cpu_us);
  Print("through serve", served);
  std::printf("  %-14s p50 %7.0f us  p99 %7.0f us  p99.9 %7.0f us\n", "serve adds",
              Percentile(served.latency_us, 0.5) - Percentile(alone.latency_us, 0.5),
              Percentile(served.latency_us, 0.99) - Percentile(alone.latency_us, 0.99),
              Percentile(served.latency_us, 0.999) - Percentile(alone.latency_us, 0.999));
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::stod(argv[1]) : 5.0;
  const std::string rates = argc > 2 ? argv[2] : "1000,5000";
  const std::size_t connections = argc > 3 ? std::stoul(argv[3]) : 32;
  const std::string chosen = argc > 4 ? argv[4] : "plain,rollout,review";
  skillrunner::testing::TempTree tree;
  FakeOpenAi fake(tree);
  FakeOpenAi judge(tree, {"50"}, "judge");
  const std::vector<Variant> variants = {
      {"plain", ""},
      {"rollout", "rollout: { candidate: candidate.yaml, traffic: 0.5 }\n"},
      {"review", "rollout: { candidate: candidate.yaml, traffic: 0.5, review: { skill: judge, sample: 1.0 } }\n",
       true}};
  std::stringstream list(rates);
  for (std::string item; std::getline(list, item, ',');) {
    const double rate = std::stod(item);
    Run alone = StraightToFake(fake.url(), rate, seconds, connections);
    std::printf("%.0f calls/s for %.0f s on %zu connections:\n", rate, seconds, connections);
    Print("fake alone", alone);
    for (const Variant& variant : variants) {
      if (chosen.find(variant.name) != std::string::npos) {
        Measure(variant, fake.url(), judge.url(), rate, seconds, connections, alone);
      }
    }
  }
  return 0;
}
