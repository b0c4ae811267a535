// What a rollout adds to a call's hot path (not a test; design.md §11.2: at most 2 µs of CPU):
// RouteCall (the key, SHA-256, the book's traffic) and CountOutcome (the counts and the
// decision after each), against the same calls to a skill without a rollout, on 1 and 2 threads
// (the book is shared, as in serve). The open-loop bench's noise on the 2-core machine is far
// above 2 µs; this measures the difference alone.
//
//   build/rollout_bench [calls-per-thread]   (default 1000000)
#include <spdlog/spdlog.h>
#include <time.h>

#include <boost/json/parse.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runner/rollout_routing.h"

namespace {
using namespace skillrunner;

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// CPU ns per call of `calls` routed and counted calls of `stable` on this thread.
double Calls(const Skill& stable, rollout::RolloutBook* book, int calls, int offset) {
  const boost::json::value input = boost::json::parse(R"({"text":"The invoice total is wrong"})");
  InvocationOutcome outcome = InvocationResult{stable.id, boost::json::parse(R"({"priority":2})"), {}, {}, {}, {}};
  InvocationOptions options;
  const double start = ThreadCpuSeconds();
  for (int i = 0; i < calls; ++i) {
    options.routing_key = "customer-" + std::to_string(offset + i);
    auto route = RouteCall(stable, input, options, book);
    if (book != nullptr && route) CountOutcome(stable, *route, outcome, *book);
  }
  return (ThreadCpuSeconds() - start) / calls * 1e9;
}

double OnThreads(const Skill& stable, rollout::RolloutBook* book, int calls, int threads) {
  std::vector<double> each(threads);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] { each[t] = Calls(stable, book, calls, t * calls); });
  }
  for (auto& thread : running) thread.join();
  double sum = 0;
  for (double ns : each) sum += ns;
  return sum / threads;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 1000000;
  spdlog::set_level(spdlog::level::warn);
  Skill plain;
  plain.id = "triage";
  Skill stable = plain;
  auto candidate = std::make_shared<Skill>(plain);
  candidate->version = 2;
  stable.candidate = candidate;
  rollout::RolloutSpec spec;
  spec.traffic = 0.5;
  spec.decide.measures = {rollout::Measure::kOk};
  spec.key = rollout::MakeRolloutKey("triage", 1, 2, "sha256:" + std::string(64, 'a'));
  stable.rollout = spec;
  for (int threads : {1, 2}) {
    rollout::RolloutBook book(nullptr);
    const double without = OnThreads(plain, nullptr, calls, threads);
    const double with = OnThreads(stable, &book, calls, threads);
    std::printf("%d thread(s), %d calls each: without a rollout %.0f ns a call, with one %.0f ns: +%.0f ns\n", threads,
                calls, without, with, with - without);
  }
  return 0;
}
