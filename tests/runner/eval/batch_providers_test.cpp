// design.md §10.6 eval --batch through Anthropic's Message Batches and Gemini's
// batchGenerateContent, against loopback servers that implement each wire
// format: the same request bodies as an online run (native strict output
// included), each submitted once, the same results; kill -9 and --resume
// submit nothing twice; a request a batch left unanswered goes into the next
// round.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner/eval/history/history.h"
#include "tests/runner/eval/batch_fixture.h"
#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/anthropic_batch_server.h"
#include "tests/support/gemini_batch_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using eval_test::ReadFile;
using eval_test::ReadRecords;

std::string AnthropicLabel(const json::object& params) {
  return test_support::AnthropicAnswer(eval_test::BatchLabel(params));
}
std::string GeminiLabel(const json::object& request) {
  return test_support::GeminiAnswer(eval_test::BatchLabel(request));
}

class ProviderBatchTest : public eval_test::BatchFixture {
 protected:
  // The batches the history DB (runs/eval-history.sqlite) holds for `run_id`: "provider round id, " each.
  std::string HistoryBatchIds(const std::string& run_id) {
    auto history = eval::History::Open(tree_.Path("runs/eval-history.sqlite"));
    if (!history) return history.error().message;
    auto batches = (*history)->Batches(run_id);
    if (!batches) return batches.error().message;
    std::string out;
    for (const eval::HistoryBatch& b : *batches)
      out += b.provider + " " + std::to_string(b.round) + " " + b.batch_id + ", ";
    return out;
  }
};

// 200 cases with a judge through Message Batches: the same 400 Messages
// bodies as the online run (output_config with the strict schema), each
// submitted once, none online, the same outputs and verdicts.
TEST_F(ProviderBatchTest, AnthropicTwoHundredCasesWithAJudgeEqualTheOnlineRunEachRequestSubmittedOnce) {
  test_support::AnthropicBatchServer online(AnthropicLabel);
  WriteTree("anthropic", online.base_url(), 200);
  auto ran_online = Eval("online.yaml --out runs/online");
  ASSERT_EQ(ran_online.status, 0) << ran_online.err;
  ASSERT_EQ(online.online_requests(), 400u);

  test_support::AnthropicBatchServer batch(AnthropicLabel);
  WriteTree("anthropic", batch.base_url(), 200);
  auto ran = Eval("batch.yaml --out runs/batch");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(batch.online_requests(), 0u);
  EXPECT_EQ(batch.submitted(), 400u);
  EXPECT_EQ(batch.submissions(), online.online_bodies());  // the same bodies, each once
  EXPECT_GE(batch.batches_created(), 2u);
  for (const auto& [body, times] : batch.submissions()) {
    EXPECT_NE(body.find(R"("output_config":{"format":{"schema":)"), std::string::npos) << body;
  }
  const auto online_outcomes = Outcomes("runs/online");
  ASSERT_EQ(online_outcomes.size(), 200u);
  EXPECT_EQ(Outcomes("runs/batch"), online_outcomes);
  EXPECT_NE(ran.err.find("batch msgbatch_1 (round 1, provider llm): sent 200 request(s)"), std::string::npos)
      << ran.err;
  EXPECT_NE(ran.err.find("batch msgbatch_1 (round 1, provider llm): ended, 200 request(s): 200 completed, 0 failed"),
            std::string::npos)
      << ran.err;
  const std::string journal = ReadFile(tree_.Path("runs/batch/batches.jsonl"));
  EXPECT_NE(journal.find(R"("event":"batch","provider":"llm","round":1,"batch_id":"msgbatch_1")"), std::string::npos);
  for (const auto& request : batch.requests()) {
    if (request.target == "/v1/messages/batches") {
      EXPECT_EQ(request.Header("anthropic-version"), "2023-06-01");
    }
  }
}

// Killed while the judges' batch is in progress: --resume polls the
// recorded batches and submits nothing again.
TEST_F(ProviderBatchTest, AnthropicKillNineWhileABatchIsInProgressThenResumeSubmitsNothingTwice) {
  test_support::AnthropicBatchServer server(AnthropicLabel);
  WriteTree("anthropic", server.base_url(), 20);
  server.HoldBatchesFrom(2);
  const auto journal = tree_.Path("runs/b/batches.jsonl");
  // Killed once the history DB names both batches of the unfinished run (design.md §10.6).
  const std::string both = "llm 1 msgbatch_1, llm 2 msgbatch_2, ";
  std::string run_id;
  ASSERT_TRUE(KillWhen([&] {
    if (ReadFile(journal).find(R"("batch_id":"msgbatch_2")") == std::string::npos) return false;
    run_id = json::parse(ReadFile(tree_.Path("runs/b/run.json"))).at("run_id").as_string();
    return HistoryBatchIds(run_id) == both;
  }));
  EXPECT_EQ(eval_test::CountLines(tree_.Path("runs/b/results.jsonl")), 0u);
  // A history lost (or written after the journal when the kill came between
  // the two) is filled in from batches.jsonl by --resume.
  for (const char* file :
       {"runs/eval-history.sqlite", "runs/eval-history.sqlite-wal", "runs/eval-history.sqlite-shm"}) {
    std::filesystem::remove(tree_.Path(file));
  }
  server.HoldBatchesFrom(0);

  auto resumed = Eval("batch.yaml --out runs/b --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming with 40 request(s) held by 2 recorded batch(es) of provider llm"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(server.batches_created(), 2u);
  ExpectCompletedEachRequestOnce(server, 20);
  EXPECT_EQ(HistoryBatchIds(run_id), both);
}

// In the first batch c3's request expires and c4's errors (overloaded): both
// go into the next round, each counted once in `resubmitted`.
TEST_F(ProviderBatchTest, AnthropicExpiredAndErroredRequestsAreResubmittedInTheNextRound) {
  test_support::AnthropicBatchServer server(AnthropicLabel);
  server.FailOnce([](const json::object& params) -> std::string {
    const std::string text = json::serialize(params);
    if (text.find("criteria_results") != std::string::npos) return "";
    if (text.find("Label t3") != std::string::npos) return "expired";
    return text.find("Label t4") != std::string::npos ? "errored" : "";
  });
  WriteTree("anthropic", server.base_url(), 5);
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("(round 1, provider llm): ended, 5 request(s): 3 completed, 2 failed"), std::string::npos)
      << ran.err;
  EXPECT_EQ(server.submitted(), 12u);
  std::multiset<std::string> why;
  for (const json::object& line : Journal("runs/b")) {
    if (line.at("event") != "resubmitted") continue;
    why.insert(std::string(line.at("why").as_string()));
    EXPECT_EQ(line.at("round"), 1);
  }
  EXPECT_EQ(why, (std::multiset<std::string>{"expired", "overloaded_error"}));
  EXPECT_EQ(json::parse(ReadFile(tree_.Path("runs/b/summary.json"))).at("resubmitted"), 2);
  const auto records = ReadRecords(tree_.Path("runs/b/results.jsonl"));
  EXPECT_EQ(records.size(), 5u);
  for (const json::object& record : records) EXPECT_TRUE(record.contains("review")) << json::serialize(record);
}

// 200 cases with a judge on a second model through batchGenerateContent:
// each batch of one model (in its path), the same generateContent bodies as
// online (responseJsonSchema included), each once, the same results.
TEST_F(ProviderBatchTest, GeminiTwoHundredCasesWithAJudgeEqualTheOnlineRunEachRequestSubmittedOnce) {
  test_support::GeminiBatchServer online(GeminiLabel);
  WriteTree("gemini", online.base_url(), 200, "j");
  auto ran_online = Eval("online.yaml --out runs/online");
  ASSERT_EQ(ran_online.status, 0) << ran_online.err;
  ASSERT_EQ(online.online_requests(), 400u);

  test_support::GeminiBatchServer batch(GeminiLabel);
  WriteTree("gemini", batch.base_url(), 200, "j");
  auto ran = Eval("batch.yaml --out runs/batch");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(batch.online_requests(), 0u);
  EXPECT_EQ(batch.submitted(), 400u);
  EXPECT_EQ(batch.submissions(), online.online_bodies());  // the same bodies to the same models, each once
  EXPECT_EQ(batch.batches_created(), 2u);
  for (const auto& [body, times] : batch.submissions()) {
    EXPECT_NE(body.find(R"("responseJsonSchema":)"), std::string::npos) << body;
  }
  const auto online_outcomes = Outcomes("runs/online");
  ASSERT_EQ(online_outcomes.size(), 200u);
  EXPECT_EQ(Outcomes("runs/batch"), online_outcomes);
  EXPECT_NE(ran.err.find("batch batches/1 (round 1, provider llm): BATCH_STATE_SUCCEEDED, 200 request(s): 200 "
                         "completed, 0 failed"),
            std::string::npos)
      << ran.err;
  std::size_t creates = 0;
  for (const auto& request : batch.requests()) {
    creates += request.target == "/v1beta/models/m:batchGenerateContent" ? 1 : 0;
    creates += request.target == "/v1beta/models/j:batchGenerateContent" ? 1 : 0;
  }
  EXPECT_EQ(creates, 2u);
}

// Killed while the judges' batch runs: --resume polls the recorded
// operations and submits nothing again.
TEST_F(ProviderBatchTest, GeminiKillNineWhileABatchIsInProgressThenResumeSubmitsNothingTwice) {
  test_support::GeminiBatchServer server(GeminiLabel);
  WriteTree("gemini", server.base_url(), 20);
  server.HoldBatchesFrom(2);
  const auto journal = tree_.Path("runs/b/batches.jsonl");
  ASSERT_TRUE(KillWhen([&] { return ReadFile(journal).find(R"("batch_id":"batches/2")") != std::string::npos; }));
  EXPECT_EQ(eval_test::CountLines(tree_.Path("runs/b/results.jsonl")), 0u);
  server.HoldBatchesFrom(0);

  auto resumed = Eval("batch.yaml --out runs/b --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming with 40 request(s) held by 2 recorded batch(es) of provider llm"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(server.batches_created(), 2u);
  ExpectCompletedEachRequestOnce(server, 20);
}

// Killed after the batch was created but before its name was written down:
// --resume finds it by its display name (run id and round) and adopts it.
TEST_F(ProviderBatchTest, GeminiABatchCreatedJustBeforeTheCrashIsAdoptedThroughItsDisplayName) {
  test_support::GeminiBatchServer server(GeminiLabel);
  WriteTree("gemini", server.base_url(), 20);
  server.DelayCreate(std::chrono::seconds(30));
  ASSERT_TRUE(KillWhen([&] { return server.batches_created() == 1; }));
  ASSERT_EQ(ReadFile(tree_.Path("runs/b/batches.jsonl")).find(R"("event":"batch")"), std::string::npos);
  server.DelayCreate(std::chrono::milliseconds(0));

  auto resumed = Eval("batch.yaml --out runs/b --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("batch batches/1 (round 1, provider llm): created before the crash, found by its tag"),
            std::string::npos)
      << resumed.err;
  ExpectCompletedEachRequestOnce(server, 20);
  const std::string run_id(json::parse(ReadFile(tree_.Path("runs/b/run.json"))).at("run_id").as_string());
  auto history = eval::History::Open(tree_.Path("runs/eval-history.sqlite"));
  ASSERT_TRUE(history.has_value()) << history.error().message;
  auto batches = (*history)->Batches(run_id);
  ASSERT_TRUE(batches.has_value() && batches->size() == 2u);
  EXPECT_TRUE(batches->at(0).adopted);  // batches/1, found after the crash
  EXPECT_FALSE(batches->at(1).adopted);
}

// The first batch expires (BATCH_STATE_EXPIRED, no responses): its five
// requests go into the next round, each counted once.
TEST_F(ProviderBatchTest, GeminiAnExpiredBatchsRequestsAreResubmittedInTheNextRound) {
  test_support::GeminiBatchServer server(GeminiLabel);
  server.ExpireBatch(1);
  WriteTree("gemini", server.base_url(), 5);
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("batch batches/1 (round 1, provider llm): BATCH_STATE_EXPIRED"), std::string::npos) << ran.err;
  EXPECT_EQ(server.submitted(), 15u);
  int resubmitted = 0;
  for (const json::object& line : Journal("runs/b")) resubmitted += line.at("event") == "resubmitted" ? 1 : 0;
  EXPECT_EQ(resubmitted, 5);
  EXPECT_EQ(json::parse(ReadFile(tree_.Path("runs/b/summary.json"))).at("resubmitted"), 5);
  const auto records = ReadRecords(tree_.Path("runs/b/results.jsonl"));
  EXPECT_EQ(records.size(), 5u);
  for (const json::object& record : records) EXPECT_TRUE(record.contains("review")) << json::serialize(record);
}

// c2's first answer breaks the schema: round 2 holds its retry (model m)
// and the judges (model j); Gemini takes one model per batch, so they go in
// two batches, each request to its own model's path.
TEST_F(ProviderBatchTest, GeminiARoundOfTwoModelsIsSentAsOneBatchPerModel) {
  test_support::GeminiBatchServer server([](const json::object& request) {
    const std::string text = json::serialize(request);
    if (text.find("Label t2") != std::string::npos && text.find("\"model\"") == std::string::npos) {
      return test_support::GeminiAnswer(R"({"label":5})");
    }
    return GeminiLabel(request);
  });
  WriteTree("gemini", server.base_url(), 5, "j");
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(server.batches_created(), 4u);  // 5 outputs; 1 retry and 4 judges; 1 judge
  int retries = 0, judges = 0;
  for (const auto& [body, times] : server.submissions()) {
    EXPECT_EQ(times, 1) << body;
    const bool judge = body.find("criteria_results") != std::string::npos;
    EXPECT_EQ(body.substr(0, 2), judge ? "j " : "m ") << body;
    judges += judge ? 1 : 0;
    retries += !judge && body.find(R"({\"label\":5})") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(judges, 5);
  EXPECT_EQ(retries, 1);
  EXPECT_EQ(ReadRecords(tree_.Path("runs/b/results.jsonl")).size(), 5u);
}

// An Anthropic without Message Batches (404 on create): with `fallback:
// online` the requests go to /v1/messages; without it each case fails with
// a PROVIDER_ERROR naming the batch.
TEST_F(ProviderBatchTest, AnthropicARefusedBatchFallsBackOnlineWhenConfiguredAndFailsItsCasesWhenNot) {
  test_support::AnthropicBatchServer server(AnthropicLabel);
  server.RefuseCreate(404);
  WriteTree("anthropic", server.base_url(), 3);
  tree_.Write("fallback.yaml",
              "id: night\nbatch: { send_after_s: 3600, poll_interval_s: 0.05, fallback: online }\n"
              "skills:\n  - skill: label\n    rubric: quality\n    judge_model: m\n");
  auto online = Eval("fallback.yaml --out runs/online");
  ASSERT_EQ(online.status, 0) << online.err;
  EXPECT_NE(online.err.find("refused batch round 1: HTTP 404: Not found: POST /v1/messages/batches; sending its 3 "
                            "request(s) online (batch.fallback: online)"),
            std::string::npos)
      << online.err;
  EXPECT_EQ(server.online_requests(), 6u);

  auto failed = Eval("batch.yaml --out runs/failed");
  EXPECT_EQ(failed.status, 1) << failed.err;
  const auto records = ReadRecords(tree_.Path("runs/failed/results.jsonl"));
  ASSERT_EQ(records.size(), 3u);
  for (const json::object& record : records) {
    ASSERT_TRUE(record.contains("error")) << json::serialize(record);
    EXPECT_EQ(record.at("error").at("code"), "PROVIDER_ERROR");
    EXPECT_NE(
        json::serialize(record.at("error").at("message"))
            .find("the batch API of provider \\\"llm\\\" refused batch round 1: Not found: POST /v1/messages/batches"),
        std::string::npos)
        << json::serialize(record.at("error"));
  }
  EXPECT_EQ(server.online_requests(), 6u);  // none more
}

// Inside a Gemini batch c3's request gets UNAVAILABLE (14): it goes into the
// next round; c4's gets INVALID_ARGUMENT (3): its attempt fails as an online
// 400 would, with the provider's message, and is not sent again.
TEST_F(ProviderBatchTest, GeminiATransientRequestErrorIsResubmittedAndAFinalOneFailsTheCase) {
  test_support::GeminiBatchServer server(GeminiLabel);
  server.FailOnce([](const json::object& request) -> std::pair<int, std::string> {
    const std::string text = json::serialize(request);
    if (text.find("criteria_results") != std::string::npos) return {0, ""};
    if (text.find("Label t3") != std::string::npos) return {14, "The service is currently unavailable."};
    if (text.find("Label t4") != std::string::npos) return {3, "Request contains an invalid argument."};
    return {0, ""};
  });
  WriteTree("gemini", server.base_url(), 5);
  auto ran = Eval("batch.yaml --out runs/b");
  EXPECT_EQ(ran.status, 1) << ran.err;
  std::vector<std::string> why;
  for (const json::object& line : Journal("runs/b")) {
    if (line.at("event") == "resubmitted") why.push_back(std::string(line.at("why").as_string()));
  }
  EXPECT_EQ(why, (std::vector<std::string>{"code 14: The service is currently unavailable."}));
  std::map<std::string, std::string> errors;
  for (const json::object& record : ReadRecords(tree_.Path("runs/b/results.jsonl"))) {
    if (record.contains("error"))
      errors[std::string(record.at("case").as_string())] = json::serialize(record.at("error"));
  }
  ASSERT_EQ(errors.size(), 1u) << ran.err;
  EXPECT_NE(errors["c4"].find(R"("code":"PROVIDER_ERROR")"), std::string::npos) << errors["c4"];
  EXPECT_NE(errors["c4"].find("Request contains an invalid argument."), std::string::npos) << errors["c4"];
  std::size_t c4_sent = 0;
  for (const auto& [body, times] : server.submissions()) {
    c4_sent +=
        body.find("Label t4") != std::string::npos && body.find("criteria_results") == std::string::npos ? times : 0;
  }
  EXPECT_EQ(c4_sent, 1u);
}

// Gemini takes at most 20 MB of inline requests in one batch: 200 cases of
// 110 KB each (22 MB, one round: every case waits on it) go out as two
// batches, none refused, none over the limit.
TEST_F(ProviderBatchTest, GeminiARoundOverTheInlineSizeLimitIsSplitIntoBatchesUnderIt) {
  test_support::GeminiBatchServer server(GeminiLabel);
  WriteTree("gemini", server.base_url(), 0);
  tree_.Write("skills/label/skill.yaml", R"(id: label
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Label t{{input.n}} {{input.text}}" }
input_schema: { type: object, required: [n, text], properties: { n: { type: integer }, text: { type: string } } }
output_schema: { type: object, required: [label], additionalProperties: false, properties: { label: { type: string } } }
)");
  const std::string text(110'000, 'x');
  std::string lines;
  for (int i = 1; i <= 200; ++i) {
    lines +=
        R"({"id":"c)" + std::to_string(i) + R"(","input":{"n":)" + std::to_string(i) + R"(,"text":")" + text + "\"}}\n";
  }
  tree_.Write("skills/label/cases.jsonl", lines);
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err.substr(0, 2000);
  EXPECT_EQ(ran.err.find("refused"), std::string::npos) << ran.err.substr(0, 2000);
  EXPECT_EQ(server.submitted(), 400u);
  std::size_t biggest = 0, output_batches = 0;
  for (const auto& request : server.requests()) {
    if (!request.target.ends_with(":batchGenerateContent")) continue;
    biggest = std::max(biggest, request.body.size());
    output_batches += request.body.find("criteria_results") == std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(output_batches, 2u);
  EXPECT_GE(server.batches_created(), 3u);  // the judges after them
  EXPECT_LE(biggest, 20'000'000u);
  EXPECT_EQ(ReadRecords(tree_.Path("runs/b/results.jsonl")).size(), 200u);
}

}  // namespace
}  // namespace skillrunner
