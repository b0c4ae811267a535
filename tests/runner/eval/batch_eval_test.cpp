// design.md §10.6 eval --batch against a loopback OpenAI that implements the
// Files and Batches wire format: the same request bodies as an online run
// (native strict schemas included), each submitted once, the same results.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/runner/eval/batch_fixture.h"
#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/openai_batch_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using eval_test::ReadFile;
using eval_test::ReadRecords;
using eval_test::Skillrunner;

// The loopback OpenAI's chat.completion for a request: eval_test::BatchLabel.
std::string Answer(const json::object& body) { return test_support::OpenAiAnswer(eval_test::BatchLabel(body)); }

class BatchEvalTest : public eval_test::BatchFixture {
 protected:
  void WriteTree(const std::string& base_url, int cases) { BatchFixture::WriteTree("openai", base_url, cases); }
};

// 200 cases with a judge: the batch run asks the same 400 requests (bodies
// equal to the online run's, strict json_schema and all), each once, none
// online, and records the same outputs and verdicts.
TEST_F(BatchEvalTest, TwoHundredCasesWithAJudgeEqualTheOnlineRunEachRequestSubmittedOnce) {
  test_support::OpenAiBatchServer online(Answer);
  WriteTree(online.base_url(), 200);
  auto ran_online = Eval("online.yaml --out runs/online");
  ASSERT_EQ(ran_online.status, 0) << ran_online.err;
  ASSERT_EQ(online.online_requests(), 400u);

  test_support::OpenAiBatchServer batch(Answer);
  WriteTree(batch.base_url(), 200);
  const auto started = std::chrono::steady_clock::now();
  auto ran_batch = Eval("batch.yaml --out runs/batch");
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(ran_batch.status, 0) << ran_batch.err;
  std::printf("200 cases with a judge in batch mode: %lld ms, %zu batch(es)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
              batch.batches_created());

  EXPECT_EQ(batch.online_requests(), 0u);
  EXPECT_EQ(batch.submitted(), 400u);
  EXPECT_EQ(batch.submissions(), online.online_bodies());  // the same bodies, each once
  EXPECT_GE(batch.batches_created(), 2u);                  // the judges wait for the outputs: a later round
  const auto online_outcomes = Outcomes("runs/online");
  ASSERT_EQ(online_outcomes.size(), 200u);
  EXPECT_EQ(Outcomes("runs/batch"), online_outcomes);
  EXPECT_NE(ran_batch.err.find("batch mode"), std::string::npos) << ran_batch.err;
  EXPECT_NE(ran_batch.err.find("): completed, "), std::string::npos) << ran_batch.err;
  // Every request is in the run folder's journal by custom_id, before its batch.
  const std::string journal = ReadFile(tree_.Path("runs/batch/batches.jsonl"));
  EXPECT_NE(journal.find(R"("event":"request","provider":"llm","round":1,"custom_id":"r1-1")"), std::string::npos);
  EXPECT_NE(journal.find(R"("role":"judge")"), std::string::npos);
  EXPECT_NE(journal.find(R"("event":"batch","provider":"llm","round":1,"batch_id":"batch_1")"), std::string::npos);
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

class BatchResumeTest : public BatchEvalTest {
 protected:
  static constexpr int kCases = 20;

  void ExpectCompletedEachRequestOnce(const test_support::OpenAiBatchServer& server) {
    BatchFixture::ExpectCompletedEachRequestOnce(server, kCases);
  }
};

// Killed while the judges' batch is in progress (the outputs' batch done):
// --resume takes the outputs from the first batch's results and the
// verdicts from the second, submitting nothing again.
TEST_F(BatchResumeTest, KillNineWhileABatchIsInProgressThenResumeSubmitsNothingTwice) {
  test_support::OpenAiBatchServer server(Answer);
  WriteTree(server.base_url(), kCases);
  server.HoldBatchesFrom(2);
  const auto journal = tree_.Path("runs/b/batches.jsonl");
  ASSERT_TRUE(KillWhen([&] { return ReadFile(journal).find(R"("batch_id":"batch_2")") != std::string::npos; }));
  EXPECT_EQ(eval_test::CountLines(tree_.Path("runs/b/results.jsonl")), 0u);
  server.HoldBatchesFrom(0);

  auto resumed = Eval("batch.yaml --out runs/b --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming with 40 request(s) held by 2 recorded batch(es) of provider llm; they are not "
                             "sent again"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(server.batches_created(), 2u);
  ExpectCompletedEachRequestOnce(server);
}

// Killed after the batch was created but before its id was written down:
// --resume finds it by the run id and round in its metadata and adopts it.
TEST_F(BatchResumeTest, ABatchCreatedJustBeforeTheCrashIsAdoptedThroughItsMetadataTag) {
  test_support::OpenAiBatchServer server(Answer);
  WriteTree(server.base_url(), kCases);
  server.DelayCreate(std::chrono::seconds(30));
  ASSERT_TRUE(KillWhen([&] { return server.batches_created() == 1; }));
  ASSERT_EQ(ReadFile(tree_.Path("runs/b/batches.jsonl")).find(R"("event":"batch")"), std::string::npos);
  server.DelayCreate(std::chrono::milliseconds(0));

  auto resumed = Eval("batch.yaml --out runs/b --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("batch batch_1 (round 1, provider llm): created before the crash, found by its tag"),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(ReadFile(tree_.Path("runs/b/batches.jsonl")).find(R"("batch_id":"batch_1","adopted":true)"),
            std::string::npos);
  ExpectCompletedEachRequestOnce(server);
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

class BatchFailureTest : public BatchEvalTest {
 protected:
  static constexpr int kCases = 5;
};

// Case c2's first answer breaks the schema: its retry (the rejected answer
// and the errors fed back, as online) goes out in round 2, beside the judges.
TEST_F(BatchFailureTest, AnAnswerThatFailsValidationIsRetriedInTheNextRoundWithTheUsualFeedback) {
  test_support::OpenAiBatchServer server([](const json::object& body) {
    const std::string text = json::serialize(body);
    if (text.find("Label t2") != std::string::npos && text.find("\"assistant\"") == std::string::npos) {
      return test_support::OpenAiAnswer(R"({"label":5})");
    }
    return Answer(body);
  });
  WriteTree(server.base_url(), kCases);
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err;
  int retries = 0;
  for (const json::object& line : Journal("runs/b")) {
    if (line.at("event") != "request" || line.at("case") != "c2" || line.at("role") != "generation") continue;
    EXPECT_EQ(line.at("attempt").as_int64(), line.at("round").as_int64()) << json::serialize(line);
    retries += line.at("attempt") == 2 ? 1 : 0;
  }
  EXPECT_EQ(retries, 1);
  int fed_back = 0;
  for (const auto& [body, times] : server.submissions()) {
    if (body.find("Label t2") == std::string::npos || body.find("\"assistant\"") == std::string::npos) continue;
    ++fed_back;
    EXPECT_NE(body.find(R"({\"label\":5})"), std::string::npos) << body;
    EXPECT_NE(body.find("/label"), std::string::npos) << body;  // the validation error's path
  }
  EXPECT_EQ(fed_back, 1);
  for (const json::object& record : ReadRecords(tree_.Path("runs/b/results.jsonl"))) {
    if (record.at("case") != "c2") continue;
    const auto& attempts = record.at("result").at("attempts").as_array();
    ASSERT_EQ(attempts.size(), 2u);
    EXPECT_EQ(attempts[0].at("kind"), "validation");
    EXPECT_EQ(record.at("result").at("output"), json::parse(R"({"label":"spam"})"));
  }
}

// The first batch expires with c3's request unfinished (in its error file
// as batch_expired): the request goes into the next round, counted once.
TEST_F(BatchFailureTest, AnExpiredRequestIsResubmittedInTheNextRound) {
  test_support::OpenAiBatchServer server(Answer);
  server.ExpireOnce([](const json::object& body) {
    const std::string text = json::serialize(body);
    return text.find("Label t3") != std::string::npos && text.find("criteria_results") == std::string::npos;
  });
  WriteTree(server.base_url(), kCases);
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("(round 1, provider llm): expired, 5 request(s): 4 completed, 1 failed"), std::string::npos)
      << ran.err;
  EXPECT_EQ(server.submitted(), static_cast<std::size_t>(2 * kCases + 1));
  int resubmitted = 0;
  for (const json::object& line : Journal("runs/b")) {
    if (line.at("event") != "resubmitted") continue;
    ++resubmitted;
    EXPECT_EQ(line.at("why"), "batch_expired");
    EXPECT_EQ(line.at("round"), 1);
  }
  EXPECT_EQ(resubmitted, 1);
  EXPECT_EQ(json::parse(ReadFile(tree_.Path("runs/b/summary.json"))).at("resubmitted"), 1);
  EXPECT_EQ(ReadRecords(tree_.Path("runs/b/results.jsonl")).size(), static_cast<std::size_t>(kCases));
  for (const json::object& record : ReadRecords(tree_.Path("runs/b/results.jsonl"))) {
    EXPECT_TRUE(record.contains("result")) << json::serialize(record);
  }
}

// design.md §12.0: a 429 on a batch's poll is a floor for that batch's next poll: with
// retry-after-ms: 400 (the suite polls every 50 ms) the server sees the next poll of the same
// batch no sooner than 400 ms after the one it refused.
TEST_F(BatchFailureTest, APollAnswered429WaitsItsRetryAfterBeforeTheNextPoll) {
  test_support::OpenAiBatchServer server(Answer);
  server.ThrottlePolls(2, std::chrono::milliseconds(400));
  WriteTree(server.base_url(), kCases);
  auto ran = Eval("batch.yaml --out runs/b");
  ASSERT_EQ(ran.status, 0) << ran.err;
  const auto throttled = server.Throttled();
  ASSERT_EQ(throttled.size(), 2u);
  const auto requests = server.requests();
  for (const auto& [target, at] : throttled) {
    auto next = std::find_if(requests.begin(), requests.end(), [&, &target = target, &at = at](const auto& request) {
      return request.method == "GET" && request.target == target && request.arrived > at;
    });
    ASSERT_NE(next, requests.end()) << target;
    const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(next->arrived - at);
    EXPECT_GE(gap.count(), 400) << target;
  }
  EXPECT_EQ(ReadRecords(tree_.Path("runs/b/results.jsonl")).size(), static_cast<std::size_t>(kCases));
}

// A server without the Batch API (404 on /v1/batches): with `fallback:
// online` every request goes online and the run equals an online run;
// without it each case fails with a PROVIDER_ERROR naming the batch.
TEST_F(BatchFailureTest, ARefusedBatchFallsBackOnlineWhenConfiguredAndFailsItsCasesWhenNot) {
  test_support::OpenAiBatchServer server(Answer);
  server.RefuseCreate(404);
  WriteTree(server.base_url(), kCases);
  tree_.Write("fallback.yaml",
              "id: night\nbatch: { send_after_s: 3600, poll_interval_s: 0.05, fallback: online }\n"
              "skills:\n  - skill: label\n    rubric: quality\n    judge_model: m\n");
  auto online = Eval("fallback.yaml --out runs/online");
  ASSERT_EQ(online.status, 0) << online.err;
  EXPECT_NE(online.err.find("refused batch round 1: HTTP 404: Invalid URL (POST /v1/batches); sending its 5 "
                            "request(s) online (batch.fallback: online)"),
            std::string::npos)
      << online.err;
  EXPECT_EQ(server.online_requests(), static_cast<std::size_t>(2 * kCases));
  for (const json::object& record : ReadRecords(tree_.Path("runs/online/results.jsonl"))) {
    EXPECT_TRUE(record.contains("review")) << json::serialize(record);
  }

  auto failed = Eval("batch.yaml --out runs/failed");
  EXPECT_EQ(failed.status, 1) << failed.err;
  const auto records = ReadRecords(tree_.Path("runs/failed/results.jsonl"));
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kCases));
  for (const json::object& record : records) {
    ASSERT_TRUE(record.contains("error")) << json::serialize(record);
    EXPECT_EQ(record.at("error").at("code"), "PROVIDER_ERROR");
    EXPECT_NE(json::serialize(record.at("error").at("message"))
                  .find("the provider refused the request: HTTP 404: the batch API of provider \\\"llm\\\" refused "
                        "batch round 1: "
                        "Invalid URL (POST /v1/batches)"),
              std::string::npos)
        << json::serialize(record.at("error"));
  }
  EXPECT_EQ(server.online_requests(), static_cast<std::size_t>(2 * kCases));  // none more
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

// design.md §10.6 cost: each request (20 input, 10 output tokens) at the batch
// price (half the online price by default, or price.batch_input/output),
// and the online cost it replaced, in summary.json and in each attempt.
TEST_F(BatchFailureTest, TheSummaryShowsTheBatchCostAndTheOnlineCostItReplaced) {
  test_support::OpenAiBatchServer server(Answer);
  WriteTree(server.base_url(), kCases);
  auto ran = Eval("batch.yaml --out runs/half");
  ASSERT_EQ(ran.status, 0) << ran.err;
  const json::object half = json::parse(ReadFile(tree_.Path("runs/half/summary.json"))).as_object();
  // Online: (20 x 2 + 10 x 8) / 1e6 per request, 10 requests.
  EXPECT_NEAR(half.at("online_cost_usd").to_number<double>(), 10 * 120e-6, 1e-12) << json::serialize(half);
  EXPECT_NEAR(half.at("batch_cost_usd").to_number<double>(), 10 * 60e-6, 1e-12);
  EXPECT_NEAR(half.at("totals").at("cost_usd").to_number<double>(), 10 * 60e-6, 1e-12);
  EXPECT_NEAR(half.at("skills").at("label").at("online_cost_usd").to_number<double>(), 10 * 120e-6, 1e-12);
  const std::string report = ReadFile(tree_.Path("runs/half/report.html"));
  EXPECT_NE(report.find("Batch mode"), std::string::npos);
  EXPECT_NE(report.find("in 2 batch(es); online it would have cost"), std::string::npos);
  EXPECT_EQ(half.at("resubmitted"), 0);
  EXPECT_EQ(half.at("batches"), 2);
  const json::object record = ReadRecords(tree_.Path("runs/half/results.jsonl")).front();
  const json::value& attempt = record.at("result").at("attempts").at(0);
  EXPECT_EQ(attempt.at("batch"), "batch_1");
  EXPECT_NEAR(attempt.at("cost_usd").to_number<double>(), 60e-6, 1e-12);
  EXPECT_NEAR(attempt.at("online_cost_usd").to_number<double>(), 120e-6, 1e-12);

  tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + server.base_url() +
                                      "\", api_key_env: NO_KEY_NEEDED }\nmodels:\n  m: { provider: llm, "
                                      "structured_output: native, price: { input: 2, output: 8, batch_input: 1, "
                                      "batch_output: 2 } }\n");
  auto priced = Eval("batch.yaml --out runs/priced");
  ASSERT_EQ(priced.status, 0) << priced.err;
  const json::object own = json::parse(ReadFile(tree_.Path("runs/priced/summary.json"))).as_object();
  EXPECT_NEAR(own.at("batch_cost_usd").to_number<double>(), 10 * 40e-6, 1e-12) << json::serialize(own);
  EXPECT_NEAR(own.at("online_cost_usd").to_number<double>(), 10 * 120e-6, 1e-12);
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

// The simulated provider has no batch API: in batch mode it answers online.
TEST_F(BatchEvalTest, TheSimulatedProviderAnswersOnlineInBatchMode) {
  WriteTree("http://127.0.0.1:9", 3);
  tree_.Write("skillrunner.yaml", "providers:\n  sim: { kind: simulated }\nmodels:\n  m: { provider: sim }\n");
  auto ran = Eval("batch.yaml --out runs/sim");
  ASSERT_LT(ran.status, 2) << ran.err;  // 0 or 1 as the simulated judge rules; never a run error
  EXPECT_NE(ran.err.find("batch mode"), std::string::npos) << ran.err;
  EXPECT_EQ(ran.err.find("batch batch_"), std::string::npos) << ran.err;
  EXPECT_EQ(ReadFile(tree_.Path("runs/sim/batches.jsonl")), "");
  const auto records = ReadRecords(tree_.Path("runs/sim/results.jsonl"));
  ASSERT_EQ(records.size(), 3u);
  for (const json::object& record : records) EXPECT_TRUE(record.contains("result")) << json::serialize(record);
}

}  // namespace
}  // namespace skillrunner
