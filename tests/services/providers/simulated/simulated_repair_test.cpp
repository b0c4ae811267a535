// The simulated provider on a retry: it repairs what the feedback names and
// keeps the rest; and as a judge: one result per criterion, scriptable verdicts.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/providers/simulated/feedback_repair.h"
#include "services/providers/simulated/simulated_provider.h"
#include "services/validation/compiled_schema.h"
#include "tests/support/run_awaitable.h"
#include "tests/support/simulation.h"

namespace skillrunner::providers {
namespace {

namespace json = boost::json;
using test_support::RunAwaitable;

constexpr std::string_view kSchema = R"({"type":"object",
  "required":["priority","category","summary","needs_human"],"additionalProperties":false,
  "properties":{"priority":{"type":"integer","minimum":1,"maximum":4},
    "category":{"enum":["billing","bug","account","feature_request","other"]},
    "summary":{"type":"string","maxLength":280},"needs_human":{"type":"boolean"},
    "tags":{"type":"array","items":{"type":"string"}}}})";

class SimulatedRepairTest : public ::testing::Test {
 protected:
  ChatRequest First(std::string_view faults) {
    ChatRequest request;
    request.model = "m";
    request.messages = {{"system", "You triage tickets."}, {"user", "Ticket: the app crashes on start"}};
    request.metadata.skill_id = "triage_ticket";
    request.metadata.task_id = "triage_ticket";
    request.metadata.answer_schema = &test_support::PersistentJson(kSchema);
    test_support::ScriptSkill(provider_, "triage_ticket", faults);
    return request;
  }
  // The validation retry: the previous answer, then the error list.
  ChatRequest Retry(ChatRequest request, const std::string& previous, const std::string& errors) {
    request.metadata.attempt += 1;
    request.messages.push_back({"assistant", previous});
    request.messages.push_back(
        {"user", "Your answer did not match the schema:\n" + errors + "\nAnswer again with the whole corrected JSON."});
    return request;
  }
  std::string Answer(const ChatRequest& request) {
    auto response = RunAwaitable(provider_.Chat(request));
    EXPECT_TRUE(response.has_value());
    return response ? response->text : "";
  }
  std::vector<FieldError> Errors(const std::string& text) {
    return (*validation::CompiledSchema::Compile(json::parse(kSchema)))->Validate(json::parse(text));
  }

  SimulatedProvider provider_{SimulatedProviderOptions{}};
};

TEST_F(SimulatedRepairTest, WrongTypeAtAttemptOneIsRepairedAtAttemptTwoKeepingTheRest) {
  ChatRequest first = First(R"([{"attempt":1,"fault":"wrong_type","path":"/priority"}])");
  std::string broken = Answer(first);
  ASSERT_FALSE(Errors(broken).empty());
  std::string fixed = Answer(Retry(first, broken, "- /priority: expected integer, found string \"high\""));
  EXPECT_TRUE(Errors(fixed).empty()) << fixed;
  json::object before = json::parse(broken).as_object();
  json::object after = json::parse(fixed).as_object();
  EXPECT_TRUE(after["priority"].is_int64());
  before.erase("priority");
  after.erase("priority");
  EXPECT_EQ(json::serialize(before), json::serialize(after));  // same members, same order
}

TEST_F(SimulatedRepairTest, WhatARuleNamesChangesToSomethingNotEmptyAndTheRestIsKept) {
  ChatRequest first = First("[]");
  json::object before = json::parse(Answer(first)).as_object();
  // A rule rejected a schema-valid answer: the boolean it names flips, the
  // absent list it names comes back with items.
  std::string errors =
      "- /needs_human: a priority-1 ticket always needs a human\n"
      "- /tags: must not be empty, found absent";
  json::object after = json::parse(Answer(Retry(first, json::serialize(before), errors))).as_object();
  EXPECT_EQ(after["needs_human"], json::value(!before["needs_human"].as_bool()));
  ASSERT_TRUE(after["tags"].is_array());
  EXPECT_FALSE(after["tags"].as_array().empty());
  for (const char* key : {"priority", "category", "summary"}) EXPECT_EQ(after[key], before[key]) << key;
}

TEST_F(SimulatedRepairTest, AFreshRetryRepairsTheAnswerTheOriginalMessagesGot) {
  ChatRequest first = First("[]");
  json::object before = json::parse(Answer(first)).as_object();
  // design.md §9.2 fresh: no assistant turn, the errors in one more user turn.
  ChatRequest fresh = first;
  fresh.metadata.attempt += 1;
  fresh.messages.push_back({"user",
                            "An earlier answer to this request did not match the JSON Schema. "
                            "Every error, by JSON pointer:\n- /summary: must not be empty, found an "
                            "empty string\nAnswer with the corrected JSON only."});
  json::object after = json::parse(Answer(fresh)).as_object();
  EXPECT_NE(after["summary"], before["summary"]);
  EXPECT_NE(after["summary"], json::value(""));
  after.erase("summary");
  before.erase("summary");
  EXPECT_EQ(json::serialize(after), json::serialize(before));
  // One user turn is a first request, whatever its text holds.
  ChatRequest lines = first;
  lines.messages[1].content = "Ticket:\n- /summary: is what the customer wrote";
  EXPECT_FALSE(simulation::FindRepairRequest(lines.messages).has_value());
}

TEST_F(SimulatedRepairTest, MissingPropertyIsAddedAndUnexpectedOneRemoved) {
  ChatRequest first = First(R"([{"attempt":1,"fault":"missing_field","path":"/summary"},
                                {"attempt":1,"fault":"extra_field"}])");
  std::string broken = Answer(first);
  std::string fixed = Answer(Retry(first, broken,
                                   "- /summary: required property is missing\n"
                                   "- /comment: unexpected property \"comment\""));
  EXPECT_TRUE(Errors(fixed).empty()) << fixed;
  json::object before = json::parse(broken).as_object();
  json::object after = json::parse(fixed).as_object();
  EXPECT_FALSE(after.contains("comment"));
  EXPECT_TRUE(after.contains("summary"));
  for (const auto& member : before) {
    if (member.key() != "comment") {
      EXPECT_EQ(after[member.key()], member.value()) << member.key();
    }
  }
}

TEST_F(SimulatedRepairTest, PreviousAnswerInFenceOrProseIsStillRepaired) {
  ChatRequest first = First(R"([{"attempt":1,"fault":"out_of_range","path":"/priority"},
                                {"attempt":1,"fault":"fence"},{"attempt":1,"fault":"prose"}])");
  std::string broken = Answer(first);
  ASSERT_TRUE(broken.starts_with("Here is"));
  std::string fixed = Answer(Retry(first, broken, "- /priority: expected at most 4, found 5"));
  EXPECT_TRUE(Errors(fixed).empty()) << fixed;
  auto previous = simulation::ExtractJson(broken);
  ASSERT_TRUE(previous);
  EXPECT_EQ(json::parse(fixed).at("category"), previous->at("category"));
}

TEST_F(SimulatedRepairTest, UnparsablePreviousAnswerGivesAFreshValidOne) {
  ChatRequest first = First(R"([{"attempt":1,"fault":"invalid_json"}])");
  std::string broken = Answer(first);
  std::string fixed = Answer(Retry(first, broken, "- (root): the answer is not valid JSON"));
  EXPECT_TRUE(Errors(fixed).empty()) << fixed;
}

TEST_F(SimulatedRepairTest, RootErrorRegeneratesTheWholeAnswer) {
  ChatRequest first = First("null");
  std::string fixed = Answer(Retry(first, "[1,2]", "- (root): expected object, found array"));
  EXPECT_TRUE(Errors(fixed).empty()) << fixed;
}

TEST_F(SimulatedRepairTest, FaultsOfTheRetryAttemptStillApply) {
  ChatRequest first = First(R"([{"attempt":[1,2],"fault":"wrong_type","path":"/needs_human"}])");
  std::string broken = Answer(first);
  std::string again = Answer(Retry(first, broken, "- /needs_human: expected boolean, found string \"yes\""));
  EXPECT_EQ(json::parse(again).at("needs_human"), "yes");
}

TEST_F(SimulatedRepairTest, FeedbackLinesAreReadFromUserTurnsAfterTheLastAnswer) {
  std::vector<ChatMessage> messages = {
      {"user", "- /ignored: before any answer"},
      {"assistant", "{\"a\":1}"},
      {"user", "Errors:\n  - /a/b~1c: expected integer, found string \"x\"\n- (root): bad\nnot a line"}};
  auto request = simulation::FindRepairRequest(messages);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->previous_answer, "{\"a\":1}");
  ASSERT_EQ(request->errors.size(), 2u);
  EXPECT_EQ(request->errors[0].pointer, "/a/b~1c");
  EXPECT_EQ(request->errors[0].message, "expected integer, found string \"x\"");
  EXPECT_EQ(request->errors[1].pointer, "");
  EXPECT_EQ(request->errors[1].message, "bad");
  EXPECT_FALSE(simulation::FindRepairRequest({{"user", "- /a: x"}}));
  EXPECT_FALSE(simulation::FindRepairRequest({{"assistant", "{}"}, {"user", "please retry"}}));
}

TEST_F(SimulatedRepairTest, ExtractJsonToleratesFencesAndProse) {
  EXPECT_EQ(simulation::ExtractJson(" {\"a\":1} "), json::parse("{\"a\":1}"));
  EXPECT_EQ(simulation::ExtractJson("```json\n{\"a\":[1]}\n```"), json::parse("{\"a\":[1]}"));
  EXPECT_EQ(simulation::ExtractJson("Sure! {\"a\":{\"b\":2}} Hope it helps {x}"), json::parse("{\"a\":{\"b\":2}}"));
  EXPECT_FALSE(simulation::ExtractJson("{\"a\":"));
  EXPECT_FALSE(simulation::ExtractJson(""));
}

constexpr std::string_view kVerdictSchema = R"({"type":"object",
  "required":["pass","issues","suggested_fixes","indeterminate","criteria_results"],
  "properties":{"pass":{"type":"boolean"},"issues":{"type":"array","items":{"type":"string"}},
    "suggested_fixes":{"type":"array","items":{"type":"string"}},
    "indeterminate":{"type":"array","items":{"type":"string"}},
    "criteria_results":{"type":"array","items":{"type":"object",
      "required":["criterion_id","reasoning","verdict","confidence"],
      "properties":{"criterion_id":{"enum":["faithful","complete"]},"reasoning":{"type":"string"},
        "verdict":{"enum":["pass","fail","indeterminate"]},
        "confidence":{"type":"number","minimum":0,"maximum":100}}}}}})";

// A judge's request; its criteria come from the verdict schema's enum.
ChatRequest JudgeRequest(SimulatedProvider& provider, std::string_view faults) {
  ChatRequest request;
  request.model = "judge";
  request.temperature = 0;
  request.messages = {{"user", "Judge this output."}};
  request.metadata.skill_id = "review_contact";
  request.metadata.task_id = "review_contact";
  request.metadata.answer_schema = &test_support::PersistentJson(kVerdictSchema);
  test_support::ScriptSkill(provider, "review_contact", faults);
  return request;
}

TEST(SimulatedJudgeTest, EmitsOnePassingResultPerCriterion) {
  SimulatedProvider provider{SimulatedProviderOptions{}};
  auto response = RunAwaitable(provider.Chat(JudgeRequest(provider, "null")));
  ASSERT_TRUE(response);
  json::value verdict = json::parse(response->text);
  EXPECT_EQ(verdict.at("pass"), true);
  EXPECT_EQ(verdict.at("issues"), json::array());
  EXPECT_EQ(verdict.at("suggested_fixes"), json::array());
  EXPECT_EQ(verdict.at("indeterminate"), json::array());
  const json::array& results = verdict.at("criteria_results").as_array();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].at("criterion_id"), "faithful");
  EXPECT_EQ(results[1].at("criterion_id"), "complete");
  EXPECT_EQ(results[0].at("verdict"), "pass");
  EXPECT_EQ(results[0].at("confidence"), 90);
  auto schema = validation::CompiledSchema::Compile(json::parse(kVerdictSchema));
  EXPECT_TRUE((*schema)->Validate(verdict).empty());
}

TEST(SimulatedJudgeTest, VerdictFaultSetsOneCriterionAndTheSummary) {
  SimulatedProvider provider{SimulatedProviderOptions{}};
  auto response = RunAwaitable(provider.Chat(JudgeRequest(
      provider, R"([{"attempt":1,"fault":"verdict","criterion":"complete","verdict":"fail","confidence":80}])")));
  ASSERT_TRUE(response);
  json::value verdict = json::parse(response->text);
  const json::array& results = verdict.at("criteria_results").as_array();
  EXPECT_EQ(results[0].at("verdict"), "pass");
  EXPECT_EQ(results[1].at("verdict"), "fail");
  EXPECT_EQ(results[1].at("confidence"), 80);
  EXPECT_EQ(verdict.at("pass"), false);
  EXPECT_EQ(verdict.at("issues"), json::parse(R"(["The output does not satisfy \"complete\"."])"));
  EXPECT_EQ(verdict.at("suggested_fixes").as_array().size(), 1u);

  auto undecided = RunAwaitable(
      provider.Chat(JudgeRequest(provider, R"([{"attempt":1,"fault":"verdict","verdict":"indeterminate"}])")));
  json::value all = json::parse(undecided->text);
  EXPECT_EQ(all.at("indeterminate"), json::parse(R"(["faithful","complete"])"));
  EXPECT_EQ(all.at("pass"), true);
  EXPECT_EQ(all.at("criteria_results").at(0).at("confidence"), 30);
}

}  // namespace
}  // namespace skillrunner::providers
