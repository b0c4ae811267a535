// LLM_REVIEW skills and the generate-review-retry gate end to end:
// SkillRunner -> LlmReviewService / LlmGenerationService -> OpenAiProvider ->
// a loopback server with scripted answers.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/support/llm_test_bed.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::LlmTestBed;
using test_support::OpenAiAnswer;

constexpr const char* kRubric =
    "id: answer_quality\n"
    "criteria:\n"
    "  - { id: faithful, description: Every claim is supported by the context., required: true }\n"
    "  - { id: complete, description: Nothing important is left out. }\n"
    "  - { id: short, description: At most two sentences. }\n"
    "indeterminate_below_confidence: 50\n";

std::string JudgeSkill(const std::string& extra = "") {
  return "id: judge_answer\ntemplate_type: LLM_REVIEW\nrubric: answer_quality\nmodel: m-loop\n" + extra;
}

std::string Item(const std::string& id, const std::string& reasoning, const std::string& verdict, int confidence) {
  return json::serialize(
      json::object{{"criterion_id", id}, {"reasoning", reasoning}, {"verdict", verdict}, {"confidence", confidence}});
}

std::string Verdict(const std::vector<std::string>& items, const std::string& issues = "[]",
                    const std::string& fixes = "[]", const std::string& pass = "") {
  std::string out = "{\"criteria_results\":[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  out += "],\"issues\":" + issues + ",\"suggested_fixes\":" + fixes;
  if (!pass.empty()) out += ",\"pass\":" + pass;
  return out + "}";
}

std::string AllPass() {
  return Verdict({Item("faithful", "Supported.", "pass", 95), Item("complete", "All there.", "pass", 90),
                  Item("short", "One sentence.", "pass", 99)});
}

std::vector<std::string> Kinds(const std::vector<Attempt>& attempts) {
  std::vector<std::string> out;
  for (const auto& a : attempts) out.emplace_back(AttemptKindName(a.kind));
  return out;
}

const json::value& LastUserContent(const json::value& body) {
  const auto& messages = body.at("messages").as_array();
  return messages.back().at("content");
}

class ReviewLoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override { bed_.tree().Write("rubrics/answer_quality.yaml", kRubric); }
  LlmTestBed bed_;
};

TEST_F(ReviewLoopbackTest, FailedRequiredCriterionFailsAndLowConfidenceIsIndeterminateWhateverTheModelSays) {
  bed_.AddSkill("judge_answer", JudgeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict({Item("faithful", "The date is not in the context.", "fail", 90),
                                                       Item("complete", "Hard to tell.", "pass", 30),
                                                       Item("short", "One sentence.", "pass", 95)},
                                                      R"(["Invents a date."])", R"(["Drop the date."])", "true"))});

  auto outcome =
      bed_.Invoke("judge_answer", R"({"subject":"The meeting is on 3 May.","context":{"notes":"Meeting next week."}})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output, json::parse(R"({"pass":false,
      "issues":["Invents a date.","faithful: The date is not in the context."],
      "suggested_fixes":["Drop the date."],"indeterminate":["complete"],
      "criteria_results":[
        {"criterion_id":"faithful","verdict":"fail","reasoning":"The date is not in the context.","confidence":90},
        {"criterion_id":"complete","verdict":"indeterminate","reasoning":"Hard to tell.","confidence":30},
        {"criterion_id":"short","verdict":"pass","reasoning":"One sentence.","confidence":95}]})"));
  EXPECT_FALSE(outcome->review.has_value());

  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0].at("temperature"), json::value(0.0));
  EXPECT_EQ(bodies[0].at("model"), "m-loop");
  EXPECT_EQ(LastUserContent(bodies[0]),
            "Subject:\nThe meeting is on 3 May.\n\nContext:\n{\"notes\":\"Meeting next week.\"}");
  std::string system(bodies[0].at("messages").at(0).at("content").as_string());
  EXPECT_NE(system.find("- faithful (required): Every claim is supported by the context.\n"), std::string::npos);
  EXPECT_NE(system.find("\"criterion_id\":{\"enum\":[\"faithful\",\"complete\",\"short\"]}"), std::string::npos);
  EXPECT_EQ(Kinds(outcome->attempts), (std::vector<std::string>{"ok"}));
}

// design.md §9.3 for judges: a judge model down for good falls back like a
// generation, and one whose retries are spent escalates.
TEST_F(ReviewLoopbackTest, AJudgeFallsBackAndEscalatesLikeAGeneration) {
  bed_.AddSkill("judge_answer",
                "id: judge_answer\ntemplate_type: LLM_REVIEW\nrubric: answer_quality\nmodel: j-small\n");
  bed_.Start("openai",
             "  j-small: { provider: llm, structured_output: none, fallbacks: [j-backup], escalate_to: j-large }\n"
             "  j-backup: { provider: llm, structured_output: none }\n"
             "  j-large: { provider: llm, structured_output: none }\n");
  for (int i = 0; i < 4; ++i) {
    bed_.server().Enqueue({.status = 503, .body = test_support::OpenAiError("overloaded", "server_error")});
  }
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass())});
  auto fell_back = bed_.Invoke("judge_answer", R"({"subject":"Fine."})");
  ASSERT_TRUE(fell_back) << json::serialize(ToJson(fell_back));
  EXPECT_EQ(fell_back->output.at("pass"), true);
  EXPECT_EQ(fell_back->metrics.fallbacks, 1);
  EXPECT_EQ(fell_back->attempts.back().model, "j-backup");
  EXPECT_EQ(fell_back->attempts.back().role, AttemptRole::kJudge);
  // Prose twice on the small judge, then the large one gives a verdict.
  bed_.server().Enqueue({.body = OpenAiAnswer("Looks good to me.")});
  bed_.server().Enqueue({.body = OpenAiAnswer("Still fine.")});
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass())});
  auto escalated = bed_.Invoke("judge_answer", R"({"subject":"Fine."})");
  ASSERT_TRUE(escalated) << json::serialize(ToJson(escalated));
  EXPECT_TRUE(escalated->metrics.escalated);
  EXPECT_EQ(Kinds(escalated->attempts), (std::vector<std::string>{"parse", "parse", "ok"}));
  EXPECT_EQ(escalated->attempts.back().model, "j-large");
  EXPECT_EQ(bed_.Bodies().back().at("model"), "j-large");
}

// design.md §11.5 for judges: a judge model that refuses hands the same request to its on_refusal model.
TEST_F(ReviewLoopbackTest, AJudgeThatRefusesTurnsToItsOnRefusalModel) {
  bed_.AddSkill("judge_answer", "id: judge_answer\ntemplate_type: LLM_REVIEW\nrubric: answer_quality\nmodel: j-shy\n");
  bed_.Start("openai",
             "  j-shy: { provider: llm, structured_output: none, on_refusal: [j-plain] }\n"
             "  j-plain: { provider: llm, structured_output: none }\n");
  bed_.server().Enqueue({.body = test_support::OpenAiRefusal("I won't judge that.")});
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass())});
  auto judged = bed_.Invoke("judge_answer", R"({"subject":"Fine."})");
  ASSERT_TRUE(judged) << json::serialize(ToJson(judged));
  EXPECT_EQ(judged->output.at("pass"), true);
  EXPECT_EQ(Kinds(judged->attempts), (std::vector<std::string>{"refusal", "ok"}));
  EXPECT_EQ(judged->attempts[0].model, "j-shy");
  EXPECT_EQ(judged->attempts[1].model, "j-plain");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  json::value same = bodies[0];
  same.at("model") = "j-plain";
  EXPECT_EQ(bodies[1], same);  // the same request, on the next model
}

// design.md §9.4: judges' attempts are priced like any other.
TEST_F(ReviewLoopbackTest, AJudgesAttemptsArePricedAndSummed) {
  bed_.AddSkill("judge_answer",
                "id: judge_answer\ntemplate_type: LLM_REVIEW\nrubric: answer_quality\nmodel: j-priced\n");
  bed_.Start("openai", "  j-priced: { provider: llm, structured_output: none, price: { input: 1, output: 4 } }\n");
  bed_.server().Enqueue({.body = OpenAiAnswer("Fine.", "stop", 500, 20)});
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass(), "stop", 600, 80)});
  auto outcome = bed_.Invoke("judge_answer", R"({"subject":"Fine."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_EQ(outcome->attempts[0].role, AttemptRole::kJudge);
  EXPECT_DOUBLE_EQ(*outcome->attempts[0].cost_usd, (500 * 1 + 20 * 4) / 1e6);
  EXPECT_DOUBLE_EQ(*outcome->attempts[1].cost_usd, (600 * 1 + 80 * 4) / 1e6);
  EXPECT_DOUBLE_EQ(*outcome->metrics.cost_usd, (1100 * 1 + 100 * 4) / 1e6);
}

TEST_F(ReviewLoopbackTest, JudgeAnsweringProseTwiceIsJudgeErrorNeverAPass) {
  bed_.AddSkill("judge_answer", JudgeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer("Looks good to me, it passes.")});
  bed_.server().Enqueue({.body = OpenAiAnswer("Yes, pass.")});

  auto outcome = bed_.Invoke("judge_answer", R"({"subject":"It rains."})");
  ASSERT_FALSE(outcome);
  const auto& failure = outcome.error();
  EXPECT_EQ(failure.error.code, ErrorCode::kJudgeError);
  EXPECT_EQ(failure.error.message,
            "the judge of rubric \"answer_quality\" (model \"m-loop\") gave no usable verdict, so the review "
            "neither passed nor failed: MAX_RETRIES_EXCEEDED: the answer is still not JSON after 1 retry");
  EXPECT_EQ(failure.error.details.at("cause"), "MAX_RETRIES_EXCEEDED");
  EXPECT_EQ(Kinds(failure.attempts), (std::vector<std::string>{"parse", "parse"}));
  EXPECT_EQ(failure.attempts[0].raw, "Looks good to me, it passes.");
  EXPECT_EQ(failure.attempts[1].raw, "Yes, pass.");
  EXPECT_EQ(failure.metrics.attempts, 2);
  EXPECT_EQ(ErrorToJson(failure).at("code"), "JUDGE_ERROR");
  EXPECT_EQ(ExitStatusFor(failure.error.code), 4);
}

TEST_F(ReviewLoopbackTest, OmittedCriterionIsFedBackAndStillOmittedIsJudgeError) {
  bed_.AddSkill("judge_answer", JudgeSkill());
  bed_.Start();
  const std::string missing_short =
      Verdict({Item("faithful", "Supported.", "pass", 95), Item("complete", "All there.", "pass", 90)});
  bed_.server().Enqueue({.body = OpenAiAnswer(missing_short)});
  bed_.server().Enqueue({.body = OpenAiAnswer(missing_short)});

  auto outcome = bed_.Invoke("judge_answer", R"({"subject":"It rains."})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kJudgeError);
  std::vector<FieldError> expected = {{"/criteria_results", "criterion \"short\" is missing"}};
  EXPECT_EQ(outcome.error().error.errors, expected);
  EXPECT_EQ(Kinds(outcome.error().attempts), (std::vector<std::string>{"validation", "validation"}));

  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(LastUserContent(bodies[1]),
            "Your answer does not match the JSON Schema. Every error, by JSON pointer:\n"
            "- /criteria_results: criterion \"short\" is missing\n"
            "Answer again with the corrected JSON only: one JSON value, no prose, no code fence.");
  EXPECT_EQ(bodies[1].at("temperature"), json::value(0.0));
}

TEST_F(ReviewLoopbackTest, OmittedCriterionRepairedOnTheRetryGivesAVerdict) {
  bed_.AddSkill("judge_answer", JudgeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict({Item("faithful", "Supported.", "pass", 95),
                                                       Item("complete", "All there.", "pass", 90)}))});
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass())});
  auto outcome = bed_.Invoke("judge_answer", R"({"subject":"It rains."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output.at("pass"), true);
  EXPECT_EQ(Kinds(outcome->attempts), (std::vector<std::string>{"validation", "ok"}));
}

TEST_F(ReviewLoopbackTest, ThreeSamplesWithOneDissentingJudgeTakeTheMajority) {
  bed_.AddSkill("judge_answer", JudgeSkill("samples: 3\n"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass())});
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict(
                             {Item("faithful", "Supported.", "pass", 80), Item("complete", "All there.", "pass", 90),
                              Item("short", "Three sentences.", "fail", 70)},
                             R"(["Too long."])"))});
  bed_.server().Enqueue({.body = OpenAiAnswer(AllPass())});

  auto outcome = bed_.Invoke("judge_answer", R"({"subject":"It rains."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output, json::parse(R"({"pass":true,"issues":["Too long."],"suggested_fixes":[],
      "indeterminate":[],"criteria_results":[
        {"criterion_id":"faithful","verdict":"pass","reasoning":"Supported.","confidence":90,"agreement":1},
        {"criterion_id":"complete","verdict":"pass","reasoning":"All there.","confidence":90,"agreement":1},
        {"criterion_id":"short","verdict":"pass","reasoning":"One sentence.","confidence":99,"agreement":0.67}]})"));
  EXPECT_EQ(bed_.Bodies().size(), 3u);
  EXPECT_EQ(Kinds(outcome->attempts), (std::vector<std::string>{"ok", "ok", "ok"}));
}

TEST_F(ReviewLoopbackTest, NativeJudgeSendsTheStrictVerdictSchemaAndIgnoresANullPass) {
  bed_.AddSkill("judge_answer",
                "id: judge_answer\ntemplate_type: LLM_REVIEW\nrubric: answer_quality\nmodel: m-native\n");
  bed_.Start();
  std::string answer = AllPass();
  answer.insert(answer.size() - 1, ",\"pass\":null");
  bed_.server().Enqueue({.body = OpenAiAnswer(answer)});
  auto outcome = bed_.Invoke("judge_answer", R"({"subject":"It rains."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output.at("pass"), true);
  EXPECT_EQ(outcome->metrics.mode, RunMode::kNativeStrict);
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  const auto& format = bodies[0].at("response_format");
  EXPECT_EQ(format.at("type"), "json_schema");
  EXPECT_EQ(format.at("json_schema").at("name"), "judge_answer_verdict");
  EXPECT_EQ(format.at("json_schema").at("strict"), true);
  EXPECT_EQ(format.at("json_schema").at("schema").at("required"),
            json::parse(R"(["criteria_results","issues","suggested_fixes","pass"])"));
}

// A generation skill gated by a rubric.
constexpr const char* kBrevityRubric =
    "id: brevity\n"
    "criteria:\n"
    "  - { id: short, description: One sentence., required: true }\n"
    "  - { id: faithful, description: Nothing invented. }\n";

std::string SummarizeSkill(const std::string& review = "review: { rubric: brevity, retry_once: true }\n") {
  return "id: summarize\ntemplate_type: LLM_JSON_GENERATION\nmodel: m-loop\ntemperature: 0.7\n"
         "prompt: { system: \"You summarize.\", user: \"Text: {{input.text}}\" }\n"
         "input_schema: { type: object, required: [text], properties: { text: { type: string } } }\n"
         "output_schema: { type: object, required: [summary], additionalProperties: false, "
         "properties: { summary: { type: string } } }\n" +
         review;
}

std::string BrevityVerdict(const std::string& short_verdict, const std::string& reasoning,
                           const std::string& issues = "[]", const std::string& fixes = "[]") {
  return Verdict({Item("short", reasoning, short_verdict, 90), Item("faithful", "Nothing invented.", "pass", 90)},
                 issues, fixes);
}

class ReviewGateTest : public ::testing::Test {
 protected:
  void SetUp() override { bed_.tree().Write("rubrics/brevity.yaml", kBrevityRubric); }
  LlmTestBed bed_;
};

TEST_F(ReviewGateTest, FailedReviewRegeneratesOnceWithIssuesAndFixesAndKeepsBothReviews) {
  bed_.AddSkill("summarize", SummarizeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"It rains. It is cold. Take a coat."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("fail", "Three sentences.", R"(["Too long."])",
                                                             R"(["Cut it to one sentence."])"))});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain: take a coat."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("pass", "One sentence."))});

  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain all day, cold, bring a coat."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output, json::parse(R"({"summary":"Cold rain: take a coat."})"));
  ASSERT_TRUE(outcome->review);
  EXPECT_EQ(*outcome->review, json::parse(R"({"pass":true,"issues":[],"suggested_fixes":[],"indeterminate":[],
      "criteria_results":[
        {"criterion_id":"short","verdict":"pass","reasoning":"One sentence.","confidence":90},
        {"criterion_id":"faithful","verdict":"pass","reasoning":"Nothing invented.","confidence":90}],
      "first":{"pass":false,"issues":["Too long.","short: Three sentences."],
        "suggested_fixes":["Cut it to one sentence."],"indeterminate":[],
        "criteria_results":[
          {"criterion_id":"short","verdict":"fail","reasoning":"Three sentences.","confidence":90},
          {"criterion_id":"faithful","verdict":"pass","reasoning":"Nothing invented.","confidence":90}]}})"));

  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 4u);
  EXPECT_EQ(LastUserContent(bodies[0]), "Text: Rain all day, cold, bring a coat.");
  EXPECT_EQ(bodies[0].at("temperature"), json::value(0.7));
  // The judge: temperature 0, the output as subject, the input as context.
  EXPECT_EQ(bodies[1].at("temperature"), json::value(0.0));
  EXPECT_EQ(LastUserContent(bodies[1]),
            "Subject:\n{\"summary\":\"It rains. It is cold. Take a coat.\"}\n\n"
            "Context:\n{\"text\":\"Rain all day, cold, bring a coat.\"}");
  // The regeneration (retry.strategy continuation, the default): the first
  // request's messages, the rejected answer as the model's turn, then the
  // critique.
  json::array expected = bodies[0].at("messages").as_array();
  expected.push_back(
      json::object{{"role", "assistant"}, {"content", R"({"summary":"It rains. It is cold. Take a coat."})"}});
  expected.push_back(json::object{{"role", "user"},
                                  {"content",
                                   "A reviewer rejected this answer:\n"
                                   "- Too long.\n"
                                   "- short: Three sentences.\n"
                                   "Suggested fixes:\n"
                                   "- Cut it to one sentence.\n"
                                   "Answer again with these fixed."}});
  EXPECT_EQ(bodies[2].at("messages"), json::value(expected));
  EXPECT_EQ(bodies[2].at("temperature"), json::value(0.7));

  EXPECT_EQ(Kinds(outcome->attempts), (std::vector<std::string>{"review", "ok", "ok", "ok"}));
  std::vector<FieldError> rejected = {{"", "review: Too long."}, {"", "review: short: Three sentences."}};
  EXPECT_EQ(outcome->attempts[0].errors, rejected);
  EXPECT_EQ(outcome->metrics.attempts, 4);
  EXPECT_EQ(outcome->metrics.mode, RunMode::kValidationLoop);
  EXPECT_EQ(ToJson(outcome).at("review").at("first").at("pass"), false);
}

// Under retry.strategy fresh the regeneration is the first request again,
// its user turn carrying the critique alone.
TEST_F(ReviewGateTest, UnderFreshTheRegenerationShowsTheCritiqueAlone) {
  bed_.AddSkill("summarize",
                SummarizeSkill("retry: { strategy: fresh }\nreview: { rubric: brevity, retry_once: true }\n"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"It rains. It is cold. Take a coat."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("fail", "Three sentences.", R"(["Too long."])"))});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain: take a coat."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("pass", "One sentence."))});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain all day."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 4u);
  json::array expected = bodies[0].at("messages").as_array();
  expected.back().as_object()["content"] =
      "Text: Rain all day.\n\n"
      "A reviewer rejected an earlier answer:\n"
      "- Too long.\n"
      "- short: Three sentences.\n"
      "Answer again with these fixed.";
  EXPECT_EQ(bodies[2].at("messages"), json::value(expected));
}

TEST_F(ReviewGateTest, PassingFirstReviewReturnsTheFirstOutputWithoutFirst) {
  bed_.AddSkill("summarize", SummarizeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("pass", "One sentence."))});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  ASSERT_TRUE(outcome->review);
  EXPECT_EQ(outcome->review->at("pass"), true);
  EXPECT_FALSE(outcome->review->as_object().contains("first"));
  EXPECT_EQ(bed_.Bodies().size(), 2u);
}

TEST_F(ReviewGateTest, StillFailingFinalReviewIsASuccessWithPassFalse) {
  bed_.AddSkill("summarize", SummarizeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"One. Two."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("fail", "Two sentences.", R"(["Too long."])"))});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"One. Two. Three."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("fail", "Three sentences."))});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output, json::parse(R"({"summary":"One. Two. Three."})"));
  EXPECT_EQ(outcome->review->at("pass"), false);
  EXPECT_EQ(outcome->review->at("issues"), json::parse(R"(["short: Three sentences."])"));
  EXPECT_EQ(outcome->review->at("first").at("pass"), false);
  EXPECT_EQ(LastUserContent(bed_.Bodies()[2]),
            "A reviewer rejected this answer:\n- Too long.\n- short: Two sentences.\n"
            "Answer again with these fixed.");
}

TEST_F(ReviewGateTest, WithoutRetryOnceAFailedReviewIsReturnedAsIs) {
  bed_.AddSkill("summarize", SummarizeSkill("review: { rubric: brevity }\n"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"One. Two."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(BrevityVerdict("fail", "Two sentences."))});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->review->at("pass"), false);
  EXPECT_EQ(bed_.Bodies().size(), 2u);
  EXPECT_EQ(Kinds(outcome->attempts), (std::vector<std::string>{"ok", "ok"}));
}

TEST_F(ReviewGateTest, JudgeErrorInTheGateFailsTheInvocation) {
  bed_.AddSkill("summarize", SummarizeSkill());
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer("Fine.")});
  bed_.server().Enqueue({.body = OpenAiAnswer("Really fine.")});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain."})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kJudgeError);
  EXPECT_EQ(outcome.error().error.message,
            "the judge of rubric \"brevity\" (model \"m-loop\") gave no usable verdict, so the review neither "
            "passed nor failed: MAX_RETRIES_EXCEEDED: the answer is still not JSON after 1 retry");
  EXPECT_EQ(Kinds(outcome.error().attempts), (std::vector<std::string>{"ok", "parse", "parse"}));
  EXPECT_EQ(outcome.error().metrics.mode, RunMode::kValidationLoop);
}

}  // namespace
}  // namespace skillrunner
