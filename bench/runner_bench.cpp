// The runner's own overhead per LLM_JSON_GENERATION invocation (not a test):
// SkillRunner::Invoke -> input validation -> prompt rendering -> provider ->
// JSON extraction -> output validation -> result, measured
//   1. on the simulated provider with zero latency (pure runner cost), and
//   2. over loopback HTTP to a server answering a fixed chat.completion at once
//      (runner + HttpClient + a kernel round trip),
// sequentially (latency: median and p99 in microseconds) and with 64
// invocations in flight (throughput and CPU time per invocation: the CPU of
// the thread that runs the invocations, not the loopback server's); and
// then the loopback server's own round trip (a raw HTTP/1.1 client on one
// connection), and what one sequential invocation spends beyond it;
//   3. the loopback HTTP path with traces exported (design.md §9.4) to a collector
//      that answers, is down (nothing listens), or hangs (never answers):
//      what tracing costs an invocation (the whole process's CPU, the
//      exporter's thread included), and the spans exported and dropped.
//
//   build/runner_bench [invocations]
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/triage_skill.h"
#include "runner/skill_runner.h"
#include "runner/skill_services.h"
#include "services/handler/process_runner.h"
#include "services/providers/retrying_provider.h"
#include "services/providers/set/provider_set.h"
#include "services/telemetry/otlp_exporter.h"
#include "tests/support/child_process.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace {
namespace json = boost::json;
using namespace skillrunner;
using Clock = std::chrono::steady_clock;

// The runner's CPU: this thread's, which runs the io_context (the loopback
// servers run on threads of their own, as a provider would be elsewhere);
// `process`: the whole process's (the exporter's thread included).
double CpuSeconds(bool process) {
  rusage usage{};
  getrusage(process ? RUSAGE_SELF : RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

constexpr const char* kSkill = skillrunner::bench::kTriageSkill;

struct Bench {
  skillrunner::testing::TempTree tree;
  boost::asio::io_context io;
  handler::AsioProcessRunner process_runner;
  generation::ModelDowngrades downgrades;
  generation::SessionMemory sessions;
  std::unique_ptr<providers::ProviderSet> providers;
  std::unique_ptr<SkillRunner> runner;

  Bench(const std::string& provider_yaml, const std::string& model) {
    std::string skill = kSkill;
    skill.replace(skill.find("MODEL"), 5, model);
    tree.Write("skills/triage/skill.yaml", skill);
    tree.Write("skillrunner.yaml",
               "providers:\n" + provider_yaml + "models:\n  bench-model: { provider: p, structured_output: none }\n");
    auto env = [](std::string_view name) -> std::optional<std::string> {
      if (name == "OPENAI_API_KEY") return "sk-bench";
      return std::nullopt;
    };
    auto config = LoadConfig(tree.Path("skillrunner.yaml").string(), env);
    RegistryOptions options;
    options.skills_dir = tree.Path("skills");
    auto loaded = SkillRegistry::Load(options, *config);
    for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    providers = std::move(*providers::ProviderSet::Create(config->providers, io.get_executor(), env));
    runner = std::make_unique<SkillRunner>(loaded.registry);
    auto lookup = [set = providers.get()](std::string_view name) { return set->Find(name); };
    InstallServices(*runner, ServiceDeps{lookup, process_runner, downgrades, sessions});
  }
};

boost::asio::awaitable<void> Worker(SkillRunner& runner, int count, std::vector<double>& latencies_us, int& failures) {
  json::value input = json::parse(R"({"text":"The login page rejects my password since this morning."})");
  for (int i = 0; i < count; ++i) {
    auto start = Clock::now();
    // Named: inside a coroutine g++ 12 moves a defaulted class-type argument
    // bitwise, and InvocationOptions' strings then free a pointer into the frame.
    InvocationOptions options;
    auto outcome = co_await runner.Invoke("triage", input, std::move(options));
    latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!outcome && failures++ == 0) {
      std::fprintf(stderr, "first failure: %s\n", outcome.error().error.message.c_str());
    }
  }
}

// Prints the row; returns the p50 latency in microseconds.
double Run(const char* name, Bench& bench, int total, int concurrency, bool traced = false) {
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(concurrency));
  int failures = 0;
  double cpu0 = CpuSeconds(traced);
  auto start = Clock::now();
  for (int w = 0; w < concurrency; ++w) {
    boost::asio::co_spawn(bench.io,
                          Worker(*bench.runner, total / concurrency, latencies[static_cast<std::size_t>(w)], failures),
                          boost::asio::detached);
  }
  bench.io.restart();
  bench.io.run();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = CpuSeconds(traced) - cpu0;
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[static_cast<std::size_t>(p * static_cast<double>(all.size() - 1))];
  };
  std::printf("| %-26s | %4d | %7zu | %9.0f | %8.1f | %8.1f | %9.1f | %d |", name, concurrency, all.size(),
              static_cast<double>(all.size()) / wall, pct(0.5), pct(0.99), cpu / static_cast<double>(all.size()) * 1e6,
              failures);
  if (!traced) std::printf("\n");
  return pct(0.5);
}

// The loopback server's own round trip, as wrk on one connection measures
// it: one keep-alive connection, a chat request written and its whole answer
// read, `count` times in a row; the median in microseconds. What one
// sequential invocation adds is its p50 beyond this.
double ServerRoundTripUs(std::uint16_t port, int count) {
  const std::string body = R"({"model":"bench-model","messages":[{"role":"user","content":"Ticket: hi"}]})";
  const std::string request =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const int fd = test_support::ConnectToLoopback(port);
  if (fd < 0) return 0;
  std::vector<double> times;
  std::string buffer(64 * 1024, '\0');
  for (int i = 0; i < count; ++i) {
    auto start = Clock::now();
    if (::send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) break;
    std::string answer;
    std::size_t wanted = std::string::npos;
    while (wanted == std::string::npos || answer.size() < wanted) {
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
      if (n <= 0) break;
      answer.append(buffer.data(), static_cast<std::size_t>(n));
      const auto head_end = answer.find("\r\n\r\n");
      const auto length_at = answer.find("Content-Length: ");
      if (wanted == std::string::npos && head_end != std::string::npos && length_at != std::string::npos) {
        wanted = head_end + 4 + std::stoul(answer.substr(length_at + 16));
      }
    }
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  ::close(fd);
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The loopback server answering every chat with one triage.
void AnswerTriage(test_support::LoopbackServer& server) {
  server.SetRecording(false);
  server.SetDefault(
      {.body = test_support::OpenAiAnswer(
           R"({"priority":2,"category":"bug","summary":"Login rejects the password.","needs_human":false})")});
}

// The simulated and loopback HTTP rows, then the server's own round trip.
void RunBasics(int total) {
  {
    Bench bench("  p: { kind: simulated }\n", "bench-model");
    Run("simulated, zero latency", bench, total, 1);
    Run("simulated, zero latency", bench, total, 64);
  }
  test_support::LoopbackServer server;
  AnswerTriage(server);
  Bench bench("  p: { kind: openai, base_url: \"" + server.base_url() + "/v1\" }\n", "bench-model");
  const double p50 = Run("openai over loopback HTTP", bench, total, 1);
  Run("openai over loopback HTTP", bench, total, 64);
  const auto port = static_cast<std::uint16_t>(std::stoi(server.base_url().substr(server.base_url().rfind(':') + 1)));
  const double round_trip = ServerRoundTripUs(port, total);
  std::printf(
      "\nThe loopback server's own round trip (one connection, p50): %.1f us; one sequential invocation "
      "over HTTP spends %.1f us beyond it.\n\n",
      round_trip, p50 - round_trip);
}

// One row per collector: none, one that answers, one that is down, one that
// hangs. TRACE_ONLY="is down" (say) runs only that row: the rows vary by
// 10-15% from run to run on a small VM, so compare them over several processes.
void RunTracing(int total) {
  std::printf("\n| %-26s | %4s | %7s | %9s | %8s | %8s | %9s | %s | %s | %s |\n", "traces to a collector that", "c",
              "calls", "calls/s", "p50 us", "p99 us", "CPU us/call", "failed", "exported", "dropped");
  std::printf("|%s|------|---------|-----------|----------|----------|-----------|---|---|---|\n",
              std::string(28, '-').c_str());
  test_support::LoopbackServer server;
  AnswerTriage(server);
  test_support::LoopbackServer collector;
  collector.SetRecording(false);
  collector.SetDefault({.body = "{}"});
  test_support::LoopbackServer hanging;
  hanging.SetRecording(false);
  hanging.SetDefault({.body = "{}", .delay = std::chrono::milliseconds(600'000)});
  const std::string down = "http://127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort());
  const std::pair<const char*, std::string> collectors[] = {
      {"(tracing off)", ""}, {"answers", collector.base_url()}, {"is down", down}, {"hangs", hanging.base_url()}};
  const char* only = std::getenv("TRACE_ONLY");
  for (const auto& [name, url] : collectors) {
    if (only != nullptr && std::string(only) != name) continue;
    Bench bench("  p: { kind: openai, base_url: \"" + server.base_url() + "/v1\" }\n", "bench-model");
    std::shared_ptr<telemetry::OtlpExporter> exporter;
    if (!url.empty()) {
      telemetry::OtlpExporterOptions options;
      options.endpoint = telemetry::TracesUrl(url);
      options.resource.service_name = "bench";
      options.schedule_delay = std::chrono::milliseconds(200);
      options.shutdown_timeout = std::chrono::milliseconds(1000);
      exporter = std::make_shared<telemetry::OtlpExporter>(options);
      bench.runner->SetTracing(TraceSettings{exporter, false, {}});
    }
    Run(name, bench, total, 64, true);
    std::uint64_t exported = 0, dropped = 0;
    if (exporter) {
      exporter->Shutdown();
      exported = exporter->Stats().exported_spans;
      dropped = exporter->Stats().dropped_spans;
    }
    std::printf(" %llu | %llu |\n", static_cast<unsigned long long>(exported),
                static_cast<unsigned long long>(dropped));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int total = argc > 1 ? std::atoi(argv[1]) : 20000;
  spdlog::set_level(spdlog::level::warn);
  std::printf("| %-26s | %4s | %7s | %9s | %8s | %8s | %9s | %s |\n", "path", "c", "calls", "calls/s", "p50 us",
              "p99 us", "CPU us/call", "failed");
  std::printf("|%s|------|---------|-----------|----------|----------|-----------|---|\n",
              std::string(28, '-').c_str());
  if (std::getenv("TRACE_ONLY") == nullptr) RunBasics(total);
  RunTracing(total);
  return 0;
}
