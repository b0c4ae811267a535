// skillrunner view on a big history (not a test; design.md §11.3: every API answer at most 200 ms
// p95 on the 2-core machine, the process under 200 MB). Generates a history of RUNS x CASES (once:
// an existing file is reused), starts `skillrunner view` on it, asks each kind of answer REQUESTS
// times, one at a time, for random runs and cases, and prints each kind's p50, p95 and max, then the
// viewer's peak resident memory (VmHWM).
//
//   build/view_bench [RUNS CASES REQUESTS FILE]   (default 1000 1000 40 build/view-bench.sqlite)
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/history_fixture.h"
#include "tests/support/http_fetch.h"

namespace {
using namespace skillrunner;
using namespace std::chrono_literals;

std::string ReadFile(const std::string& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string PeakMemory(pid_t pid) {
  std::istringstream status(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return line.substr(6);
  }
  return "?";
}

struct Kind {
  const char* name;
  std::function<std::string(std::mt19937&)> target;
};

void Measure(std::uint16_t port, const Kind& kind, int requests, std::mt19937& random) {
  std::vector<double> ms;
  std::size_t bytes = 0;
  for (int i = 0; i < requests; ++i) {
    const std::string target = kind.target(random);
    const auto start = std::chrono::steady_clock::now();
    auto reply = test_support::HttpFetch(port, target);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (reply.status != 200) std::fprintf(stderr, "%s: %d %s\n", target.c_str(), reply.status, reply.body.c_str());
    bytes += reply.body.size();
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(p * ms.size()))]; };
  std::printf("%-12s p50 %7.1f ms  p95 %7.1f ms  max %7.1f ms  (%zu requests, %zu KB an answer)\n", kind.name, at(0.5),
              at(0.95), ms.back(), ms.size(), bytes / ms.size() / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t runs = argc > 1 ? std::stoul(argv[1]) : 1000;
  const std::size_t cases = argc > 2 ? std::stoul(argv[2]) : 1000;
  const int requests = argc > 3 ? std::stoi(argv[3]) : 40;
  const std::string file = argc > 4 ? argv[4] : "build/view-bench.sqlite";
  if (!std::filesystem::exists(file)) {
    const auto start = std::chrono::steady_clock::now();
    if (auto error = test_support::GenerateHistory(file, {runs, cases, 1, "nightly"}); !error.empty()) {
      std::fprintf(stderr, "view_bench: %s\n", error.c_str());
      return 1;
    }
    std::printf("generated %zu runs x %zu cases in %.0f s: %ju MB\n", runs, cases,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                static_cast<std::uintmax_t>(std::filesystem::file_size(file) >> 20));
  }
  const std::string err = file + ".view-stderr";
  test_support::ChildProcess view(SKILLRUNNER_BINARY, {"view", "--history", file, "--listen", "127.0.0.1:0"},
                                  test_support::CleanEnvironment(), {}, {}, err);
  const std::uint16_t port = test_support::WaitForViewPort(err, 60s);
  if (port == 0) {
    std::fprintf(stderr, "view_bench: the viewer did not start: %s\n", ReadFile(err).c_str());
    return 1;
  }
  auto run = [runs](std::mt19937& r) { return test_support::GeneratedRunId(1 + r() % (runs - 1)); };
  const char* skills[] = {"extract_contact", "triage_ticket", "summarize"};
  const std::vector<Kind> kinds = {
      {"suites", [](std::mt19937&) { return std::string("/api/suites"); }},
      {"suite", [](std::mt19937&) { return std::string("/api/suites/nightly"); }},
      {"suite 1000", [](std::mt19937&) { return std::string("/api/suites/nightly?limit=1000"); }},
      {"run", [&](std::mt19937& r) { return "/api/runs/" + run(r); }},
      {"compare", [&](std::mt19937& r) { return "/api/compare?a=" + run(r); }},
      {"case",
       [&](std::mt19937& r) {
         std::size_t i = r() % cases;
         return "/api/cases?suite=nightly&skill=" + std::string(skills[i % 3]) + "&case=case-" + std::to_string(i);
       }},
      {"record",
       [&](std::mt19937& r) {
         std::size_t i = r() % cases;
         return "/api/runs/" + run(r) + "/case?skill=" + skills[i % 3] + "&case=case-" + std::to_string(i);
       }},
      {"page", [](std::mt19937&) { return std::string("/runs/x"); }},
  };
  std::mt19937 random(42);
  for (const Kind& kind : kinds) Measure(port, kind, requests, random);
  std::printf("viewer peak resident memory:%s\n", PeakMemory(view.pid()).c_str());
  view.Signal(SIGTERM);
  view.Wait(10s);
  return 0;
}
