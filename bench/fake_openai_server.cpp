// A fake OpenAI Chat Completions server for benchmarks (not a test): a
// LoopbackServer on 127.0.0.1 that answers every request, whatever its path,
// with the same valid chat.completion after a fixed delay. It prints its base
// URL ("http://127.0.0.1:PORT") on one stdout line, then serves until SIGINT
// or SIGTERM, and prints the number of requests it answered on stderr.
//
//   build/fake_openai_server [--prompt-tokens | --prompt-cache] DELAY_MS [CONTENT]
//
// --prompt-cache reports prompt caching the way OpenAI does (issue 16's
// benchmark, bench/caching_bench.sh): prompt_tokens counts the request's
// messages at 4 characters a token, and prompt_tokens_details.cached_tokens
// is the longest prefix of them seen in an earlier request, in steps of 128
// tokens from 1,024 (shorter prompts are never cached). --prompt-tokens
// reports the same prompt_tokens, none cached. Without either, every answer
// reports 60 prompt tokens (and the server parses no request).
//
// CONTENT is the assistant message's content (a string, normally JSON). The
// default is a passing rubric verdict for the criteria "correct" and "clear"
// in the shape skillrunner's judges return (services/review/verdict_schema.cpp),
// which is also a valid answer for bench/eval_bench.sh's skill and, because it
// carries "pass": true, for promptfoo's llm-rubric grader. The server cannot
// choose its answer by request, so one body serves generation and judging.
#include <signal.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>

#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"

namespace {

constexpr const char* kDefaultContent =
    R"({"criteria_results":[)"
    R"({"criterion_id":"correct","reasoning":"The answer follows from the question.","verdict":"pass","confidence":90},)"
    R"({"criterion_id":"clear","reasoning":"One short sentence.","verdict":"pass","confidence":85}],)"
    R"("issues":[],"suggested_fixes":[],"pass":true})";

constexpr std::size_t kCharsPerToken = 4;
constexpr std::int64_t kMinCachedTokens = 1024;
constexpr std::int64_t kCacheStep = 128;

// OpenAI-style automatic prefix caching over the messages' text.
class PromptCache {
 public:
  explicit PromptCache(bool enabled) : enabled_(enabled) {}

  // {prompt_tokens, cached_tokens} of one request body.
  std::pair<std::int64_t, std::int64_t> Count(const std::string& body) {
    std::string text;
    boost::system::error_code ec;
    boost::json::value request = boost::json::parse(body, ec);
    if (!ec && request.is_object()) {
      if (const auto* messages = request.as_object().if_contains("messages"); messages && messages->is_array()) {
        for (const auto& m : messages->as_array()) {
          if (!m.is_object()) continue;
          const auto* role = m.as_object().if_contains("role");
          const auto* content = m.as_object().if_contains("content");
          if (role && role->is_string()) text += std::string(role->as_string()) + "\n";
          if (content && content->is_string()) text += std::string(content->as_string()) + "\n";
        }
      }
    }
    const auto tokens = static_cast<std::int64_t>((text.size() + kCharsPerToken - 1) / kCharsPerToken);
    std::int64_t cached = 0;
    for (std::int64_t boundary = kMinCachedTokens; enabled_ && boundary <= tokens; boundary += kCacheStep) {
      const std::size_t hash = std::hash<std::string_view>{}(
          std::string_view(text).substr(0, static_cast<std::size_t>(boundary) * kCharsPerToken));
      if (!seen_.insert(hash).second) cached = boundary;
    }
    return {tokens, cached};
  }

 private:
  bool enabled_;
  std::unordered_set<std::size_t> seen_;
};

std::string CachedAnswer(const std::string& content, std::int64_t prompt_tokens, std::int64_t cached_tokens) {
  boost::json::value body = boost::json::parse(skillrunner::test_support::OpenAiAnswer(content, "stop", 0, 40));
  auto& usage = body.at("usage").as_object();
  usage["prompt_tokens"] = prompt_tokens;
  usage["total_tokens"] = prompt_tokens + 40;
  usage["prompt_tokens_details"] = boost::json::object{{"cached_tokens", cached_tokens}};
  return boost::json::serialize(body);
}

}  // namespace

int main(int argc, char** argv) {
  bool prompt_cache = false, prompt_tokens = false;
  if (argc > 1 && (std::string(argv[1]) == "--prompt-cache" || std::string(argv[1]) == "--prompt-tokens")) {
    prompt_cache = std::string(argv[1]) == "--prompt-cache";
    prompt_tokens = true;
    --argc;
    ++argv;
  }
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s [--prompt-tokens | --prompt-cache] DELAY_MS [CONTENT]\n", argv[0]);
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
    // Counted in both modes, so that the runs with and without caching see the same prompt_tokens.
    auto cache = std::make_shared<PromptCache>(prompt_cache);
    if (prompt_tokens)
      server.SetResponder([cache, answer, content](
                              const std::string& body) -> std::optional<skillrunner::test_support::ScriptedResponse> {
        auto [tokens, cached] = cache->Count(body);
        skillrunner::test_support::ScriptedResponse computed = answer;
        computed.body = CachedAnswer(content, tokens, cached);
        return computed;
      });
    std::printf("%s\n", server.base_url().c_str());
    std::fflush(stdout);

    int signal_number = 0;
    sigwait(&stop, &signal_number);
    std::fprintf(stderr, "fake_openai_server: %zu requests, %d connections (at most %d open)\n", server.request_count(),
                 server.connections_accepted(), server.max_open_connections());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fake_openai_server: %s\n", error.what());
    return 1;
  }
  return 0;
}
