#pragma once

// What the socket server's benchmarks share (not a test): `skillrunner serve`
// in a process of its own with its CPU and memory read from /proc,
// build/fake_openai_server in another, and the tree they serve.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/triage_skill.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::bench {

class ServeProcess {
 public:
  // `threads` 0: serve's default (one per core).
  ServeProcess(const testing::TempTree& tree, const std::string& socket, std::size_t max_in_flight,
               unsigned threads = 0)
      : process_(Binary(), Args(tree, socket, max_in_flight, threads),
                 test_support::CleanEnvironment({"OPENAI_API_KEY=sk-bench"})),
        pid_(process_.pid()) {}
  ~ServeProcess() {
    process_.Signal(SIGTERM);
    process_.Wait(std::chrono::seconds(60));
  }
  long RssKiB() const { return StatusKiB("VmRSS:"); }
  // The peak resident memory since the server started.
  long PeakRssKiB() const { return StatusKiB("VmHWM:"); }
  double CpuSeconds() const {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string skip;
    long utime = 0, stime = 0;
    for (int i = 0; i < 11; ++i) fields >> skip;
    fields >> utime >> stime;
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }

 private:
  long StatusKiB(const std::string& key) const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
    }
    return -1;
  }

  // SKILLRUNNER_BIN runs another build of the program (a before and after, back to back).
  static std::string Binary() {
    const char* other = std::getenv("SKILLRUNNER_BIN");
    return other != nullptr && *other != '\0' ? other : SKILLRUNNER_BINARY;
  }
  static std::vector<std::string> Args(const testing::TempTree& tree, const std::string& socket,
                                       std::size_t max_in_flight, unsigned threads) {
    std::vector<std::string> args = tree.TreeFlags();
    args.insert(args.begin(), {"serve", "--socket", socket});
    args.insert(args.end(), {"--max-in-flight", std::to_string(max_in_flight)});
    args.insert(args.end(), {"--state-dir", tree.Path("state").string()});  // a rollout's state: not in $HOME
    if (threads > 0) {
      args.push_back("--threads");
      args.push_back(std::to_string(threads));
    }
    return args;
  }

  test_support::ChildProcess process_;
  pid_t pid_;
};

// build/fake_openai_server in its own process, answering every request at
// once with the triage skill's answer (or as `args` say: DELAY_MS [CONTENT];
// without CONTENT, a passing verdict on the criteria "correct" and "clear").
class FakeOpenAi {
 public:
  explicit FakeOpenAi(const testing::TempTree& tree,
                      std::vector<std::string> args = {"0", R"({"priority":2,"category":"bug","summary":"Login )"
                                                            R"(rejects the password.","needs_human":false})"},
                      const std::string& name = "fake")
      : err_(tree.Path(name + ".err")),
        process_(FAKE_OPENAI_SERVER, std::move(args), test_support::CleanEnvironment(), {}, tree.Path(name + ".out"),
                 tree.Path(name + ".err")) {
    for (int i = 0; i < 1000 && url_.empty(); ++i) {
      std::ifstream out(tree.Path(name + ".out"));
      std::getline(out, url_);
      if (url_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (url_.empty()) {
      std::fprintf(stderr, "fake_openai_server did not start\n");
      std::exit(1);
    }
  }
  // Prints the server's count of requests and connections (the pool's churn shows there).
  ~FakeOpenAi() {
    process_.Signal(SIGTERM);
    process_.Wait(std::chrono::seconds(10));
    std::ifstream err(err_);
    for (std::string line; std::getline(err, line);) std::printf("          %s\n", line.c_str());
  }
  const std::string& url() const { return url_; }

 private:
  std::filesystem::path err_;
  test_support::ChildProcess process_;
  std::string url_;
};

inline void WaitForSocket(const std::string& path) {
  for (int i = 0; i < 2000; ++i) {
    boost::asio::io_context io;
    boost::asio::local::stream_protocol::socket s(io);
    boost::system::error_code ec;
    s.connect(boost::asio::local::stream_protocol::endpoint(path), ec);
    if (!ec) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "server did not start\n");
  std::exit(1);
}

inline double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

// The simulated provider answering after `latency_ms`, or (with `openai_url`)
// the OpenAI provider at that server.
// `rollout` (a block for skill.yaml) adds a candidate (version 2, another
// system prompt); `judge_url` adds the provider `judge` there, the rubric
// `quality` and the LLM_REVIEW skill `judge` on it, for an online review.
inline void WriteTree(const testing::TempTree& tree, int latency_ms, const std::string& openai_url = "",
                      const std::string& rollout = "", const std::string& judge_url = "") {
  const std::string provider = openai_url.empty()
                                   ? "  sim: { kind: simulated, latency_ms: " + std::to_string(latency_ms) + " }\n"
                                   : "  sim: { kind: openai, base_url: \"" + openai_url + "/v1\" }\n";
  const std::string judge = judge_url.empty() ? "" : "  judge: { kind: openai, base_url: \"" + judge_url + "/v1\" }\n";
  tree.Write("skillrunner.yaml",
             "providers:\n" + provider + judge + "models:\n  m: { provider: sim, structured_output: native }\n" +
                 (judge_url.empty() ? "" : "  j: { provider: judge, structured_output: native }\n") +
                 "default_provider: sim\n");
  std::string skill = kTriageSkill;
  skill.replace(skill.find("MODEL"), 5, "m");
  tree.Write("skills/triage/skill.yaml", "version: 1\n" + skill + rollout);
  if (!rollout.empty()) {
    std::string candidate = skill;
    candidate.replace(candidate.find("You triage tickets."), 19, "You triage support tickets.");
    tree.Write("skills/triage/candidate.yaml", "version: 2\n" + candidate);
  }
  if (!judge_url.empty()) {
    tree.Write("rubrics/quality.yaml",
               "id: quality\ncriteria:\n  - { id: correct, description: Right., required: true }\n"
               "  - { id: clear, description: Clear. }\n");
    tree.Write("skills/judge/skill.yaml", "id: judge\ntemplate_type: LLM_REVIEW\nmodel: j\nrubric: quality\n");
  }
}

}  // namespace skillrunner::bench
