// The runner's own overhead per LLM_JSON_GENERATION invocation (not a test):
// SkillRunner::Invoke -> input validation -> prompt rendering -> provider ->
// JSON extraction -> output validation -> result, measured
//   1. on the simulated provider with zero latency (pure runner cost), and
//   2. over loopback HTTP to a server answering a fixed chat.completion at once
//      (runner + HttpClient + a kernel round trip),
// sequentially (latency: median and p99 in microseconds) and with 64
// invocations in flight (throughput and CPU time per invocation).
//
//   build/runner_bench [invocations]
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "runner/skill_runner.h"
#include "runner/skill_services.h"
#include "services/handler/process_runner.h"
#include "services/providers/provider_set.h"
#include "services/providers/retrying_provider.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "bench/triage_skill.h"
#include "tests/support/temp_tree.h"

namespace {
namespace json = boost::json;
using namespace skillrunner;
using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
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
    tree.Write("skillrunner.yaml", "providers:\n" + provider_yaml +
                                       "models:\n  bench-model: { provider: p, structured_output: none }\n");
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

boost::asio::awaitable<void> Worker(SkillRunner& runner, int count, std::vector<double>& latencies_us,
                                    int& failures) {
  json::value input = json::parse(R"({"text":"The login page rejects my password since this morning."})");
  for (int i = 0; i < count; ++i) {
    auto start = Clock::now();
    auto outcome = co_await runner.Invoke("triage", input);
    latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!outcome && failures++ == 0) {
      std::fprintf(stderr, "first failure: %s\n", outcome.error().error.message.c_str());
    }
  }
}

void Run(const char* name, Bench& bench, int total, int concurrency) {
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(concurrency));
  int failures = 0;
  double cpu0 = CpuSeconds();
  auto start = Clock::now();
  for (int w = 0; w < concurrency; ++w) {
    boost::asio::co_spawn(bench.io, Worker(*bench.runner, total / concurrency, latencies[static_cast<std::size_t>(w)], failures),
                          boost::asio::detached);
  }
  bench.io.restart();
  bench.io.run();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = CpuSeconds() - cpu0;
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all.empty() ? 0.0 : all[static_cast<std::size_t>(p * static_cast<double>(all.size() - 1))]; };
  std::printf("| %-26s | %4d | %7zu | %9.0f | %8.1f | %8.1f | %9.1f | %d |\n", name, concurrency, all.size(),
              static_cast<double>(all.size()) / wall, pct(0.5), pct(0.99), cpu / static_cast<double>(all.size()) * 1e6,
              failures);
}

}  // namespace

int main(int argc, char** argv) {
  int total = argc > 1 ? std::atoi(argv[1]) : 20000;
  spdlog::set_level(spdlog::level::warn);
  std::printf("| %-26s | %4s | %7s | %9s | %8s | %8s | %9s | %s |\n", "path", "c", "calls", "calls/s",
              "p50 us", "p99 us", "CPU us/call", "failed");
  std::printf("|%s|------|---------|-----------|----------|----------|-----------|---|\n", std::string(28, '-').c_str());
  {
    Bench bench("  p: { kind: simulated }\n", "bench-model");
    Run("simulated, zero latency", bench, total, 1);
    Run("simulated, zero latency", bench, total, 64);
  }
  {
    test_support::LoopbackServer server;
    server.SetRecording(false);
    server.SetDefault({.body = test_support::OpenAiAnswer(
                           R"({"priority":2,"category":"bug","summary":"Login rejects the password.","needs_human":false})")});
    Bench bench("  p: { kind: openai, base_url: \"" + server.base_url() + "/v1\" }\n", "bench-model");
    Run("openai over loopback HTTP", bench, total, 1);
    Run("openai over loopback HTTP", bench, total, 64);
  }
  return 0;
}
