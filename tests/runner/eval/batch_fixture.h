#pragma once

// What the eval --batch tests share: a label skill with a judge in a
// temporary tree, the suites online.yaml and batch.yaml, the answers the
// loopback batch servers give, running and killing the real program, and
// what a completed run must hold.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval_test {

// Case i's answer as JSON text: the label ham when i is a multiple of 3,
// else spam; the judge passes ham.
inline std::string BatchLabel(const boost::json::object& body) {
  const std::string text = boost::json::serialize(body);
  if (text.find("criteria_results") != std::string::npos) {
    const std::string verdict = text.find("ham") != std::string::npos ? "pass" : "fail";
    return R"({"criteria_results":[{"criterion_id":"a","reasoning":"r","verdict":")" + verdict +
           R"(","confidence":90}],"issues":[],"suggested_fixes":[]})";
  }
  const std::size_t at = text.find("Label t");
  const int i = at == std::string::npos ? 0 : std::stoi(text.substr(at + 7));
  return std::string(R"({"label":")") + (i % 3 == 0 ? "ham" : "spam") + R"("})";
}

class BatchFixture : public ::testing::Test {
 protected:
  // `cases` cases of the label skill on provider `kind` at `base_url`, the
  // judge on model `judge` (m, or j: a second model of the same provider).
  // batch.yaml waits an hour before sending a round on time alone, so every
  // round the tests see is sent because every running case waits on it.
  void WriteTree(const std::string& kind, const std::string& base_url, int cases, const std::string& judge = "m") {
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: " + kind + ", base_url: \"" + base_url +
                                        "\", api_key_env: NO_KEY_NEEDED }\n"
                                        "models:\n  m: { provider: llm, structured_output: native, "
                                        "price: { input: 2, output: 8 } }\n"
                                        "  j: { provider: llm, structured_output: native, "
                                        "price: { input: 2, output: 8 } }\n");
    tree_.Write("skills/label/skill.yaml", R"(id: label
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Label t{{input.n}}" }
input_schema: { type: object, required: [n], properties: { n: { type: integer } } }
output_schema: { type: object, required: [label], additionalProperties: false, properties: { label: { type: string } } }
)");
    std::string lines;
    for (int i = 1; i <= cases; ++i) {
      lines += R"({"id":"c)" + std::to_string(i) + R"(","input":{"n":)" + std::to_string(i) + "}}\n";
    }
    tree_.Write("skills/label/cases.jsonl", lines);
    tree_.Write("rubrics/quality.yaml", "id: quality\ncriteria:\n  - { id: a, description: Ham., required: true }\n");
    const std::string skills = "skills:\n  - skill: label\n    rubric: quality\n    judge_model: " + judge + "\n";
    tree_.Write("online.yaml", "id: night\n" + skills);
    tree_.Write("batch.yaml", "id: night\nbatch: { send_after_s: 3600, poll_interval_s: 0.05 }\n" + skills);
  }

  Ran Eval(const std::string& args) {
    return Skillrunner(tree_.root(), "--config skillrunner.yaml --skills skills --rubrics rubrics eval " + args);
  }

  // The lines of run folder `run`'s batch journal (batches.jsonl).
  std::vector<boost::json::object> Journal(const std::string& run) {
    return ReadRecords(tree_.Path(run + "/batches.jsonl"));
  }

  // Each case's output and verdict in run folder `run`, by case id.
  std::map<std::string, std::string> Outcomes(const std::string& run) {
    std::map<std::string, std::string> out;
    for (const boost::json::object& record : ReadRecords(tree_.Path(run + "/results.jsonl"))) {
      std::string outcome;
      if (const auto* result = record.if_contains("result")) outcome += boost::json::serialize(result->at("output"));
      if (const auto* error = record.if_contains("error")) outcome += boost::json::serialize(*error);
      if (const auto* review = record.if_contains("review")) outcome += boost::json::serialize(review->at("pass"));
      out[std::string(record.at("case").as_string())] = outcome;
    }
    return out;
  }

  // Starts the batch run into runs/b and kills it (-9) once `ready` holds; false when it never did.
  template <class Ready>
  bool KillWhen(Ready ready) {
    pid_t pid = Spawn(tree_.root(), {"--config", "skillrunner.yaml", "--skills", "skills", "--rubrics", "rubrics",
                                     "eval", "batch.yaml", "--out", "runs/b"});
    if (pid <= 0) return false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!ready() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const bool was_ready = ready();
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    return was_ready && WIFSIGNALED(status);
  }

  // runs/b holds each of `cases` cases once, judged; the server got every
  // request body once, none online.
  template <class Server>
  void ExpectCompletedEachRequestOnce(const Server& server, int cases) {
    std::map<std::string, int> seen;
    for (const boost::json::object& record : ReadRecords(tree_.Path("runs/b/results.jsonl"))) {
      ++seen[std::string(record.at("case").as_string())];
      EXPECT_TRUE(record.contains("review")) << boost::json::serialize(record);
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(cases));
    for (const auto& [id, times] : seen) EXPECT_EQ(times, 1) << id;
    EXPECT_EQ(server.submitted(), static_cast<std::size_t>(2 * cases));
    for (const auto& [body, times] : server.submissions()) EXPECT_EQ(times, 1) << body;
    EXPECT_EQ(server.online_requests(), 0u);
  }

  testing::TempTree tree_;
};

}  // namespace skillrunner::eval_test
