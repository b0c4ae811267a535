// A fake OpenAI Chat Completions server for benchmarks (not a test): a
// LoopbackServer on 127.0.0.1 that answers every request, whatever its path,
// with the same valid chat.completion after a fixed delay. It prints its base
// URL ("http://127.0.0.1:PORT") on one stdout line, then serves until SIGINT
// or SIGTERM, and prints the number of requests it answered on stderr.
//
//   build/fake_openai_server DELAY_MS [CONTENT]
//
// CONTENT is the assistant message's content (a string, normally JSON). The
// default is a passing rubric verdict for the criteria "correct" and "clear"
// in the shape skillrunner's judges return (services/review/verdict_schema.cpp),
// which is also a valid answer for bench/eval_bench.sh's skill and, because it
// carries "pass": true, for promptfoo's llm-rubric grader. The server cannot
// choose its answer by request, so one body serves generation and judging.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"

namespace {

constexpr const char* kDefaultContent =
    R"({"criteria_results":[)"
    R"({"criterion_id":"correct","reasoning":"The answer follows from the question.","verdict":"pass","confidence":90},)"
    R"({"criterion_id":"clear","reasoning":"One short sentence.","verdict":"pass","confidence":85}],)"
    R"("issues":[],"suggested_fixes":[],"pass":true})";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s DELAY_MS [CONTENT]\n", argv[0]);
    return 2;
  }
  char* end = nullptr;
  const long delay_ms = std::strtol(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0' || delay_ms < 0) {
    std::fprintf(stderr, "DELAY_MS must be a non-negative integer, not \"%s\"\n", argv[1]);
    return 2;
  }
  const std::string content = argc == 3 ? argv[2] : kDefaultContent;

  // Block the stop signals before the server's thread starts, so that it
  // inherits the mask and only sigwait below sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  try {
    skillrunner::test_support::LoopbackServer server;
    server.SetRecording(false);
    skillrunner::test_support::ScriptedResponse answer;
    answer.body = skillrunner::test_support::OpenAiAnswer(content, "stop", 60, 40);
    answer.delay = std::chrono::milliseconds(delay_ms);
    server.SetDefault(answer);
    std::printf("%s\n", server.base_url().c_str());
    std::fflush(stdout);

    int signal_number = 0;
    sigwait(&stop, &signal_number);
    std::fprintf(stderr, "fake_openai_server: %zu requests, %d connections (at most %d open)\n",
                 server.request_count(), server.connections_accepted(), server.max_open_connections());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fake_openai_server: %s\n", error.what());
    return 1;
  }
  return 0;
}
