// Aggregation, the verdict schema's extra check and the judge prompt, without I/O.
#include "services/review/aggregate.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/review/judge_prompt.h"
#include "services/review/verdict_schema.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::review {
namespace {
namespace json = boost::json;

Rubric ThreeCriteria(bool faithful_required, std::string pass_rule = "") {
  Rubric rubric;
  rubric.id = "quality";
  rubric.criteria = {{"faithful", "Supported by the text.", faithful_required, "", {}},
                     {"complete", "Nothing left out.", false, "", {}},
                     {"short", "Two sentences at most.", false, "", {}}};
  rubric.pass_rule = std::move(pass_rule);
  return rubric;
}

json::value Answer(const std::string& faithful, const std::string& complete, const std::string& shortv,
                   int confidence = 90) {
  auto item = [&](const char* id, const std::string& verdict) {
    return json::object{{"criterion_id", id},
                        {"reasoning", std::string(id) + " is " + verdict},
                        {"verdict", verdict},
                        {"confidence", confidence}};
  };
  return json::object{
      {"criteria_results", json::array{item("faithful", faithful), item("complete", complete), item("short", shortv)}},
      {"issues", json::array{}},
      {"suggested_fixes", json::array{}},
      {"pass", true}};
}

bool Pass(const json::value& verdict) { return verdict.at("pass").as_bool(); }

TEST(AggregateTest, DefaultRuleCountsOnlyRequiredCriteriaWhenAnyIsRequired) {
  Rubric rubric = ThreeCriteria(true);
  EXPECT_EQ(EffectivePassRule(rubric), "required");
  EXPECT_TRUE(Pass(Aggregate(rubric, {Answer("pass", "fail", "fail")})));
  EXPECT_FALSE(Pass(Aggregate(rubric, {Answer("fail", "pass", "pass")})));
}

TEST(AggregateTest, DefaultRuleCountsAllCriteriaWhenNoneIsRequired) {
  Rubric rubric = ThreeCriteria(false);
  EXPECT_EQ(EffectivePassRule(rubric), "all");
  EXPECT_FALSE(Pass(Aggregate(rubric, {Answer("pass", "fail", "pass")})));
  EXPECT_TRUE(Pass(Aggregate(rubric, {Answer("pass", "pass", "pass")})));
}

TEST(AggregateTest, ExplicitPassRuleOverridesTheDefault) {
  EXPECT_FALSE(Pass(Aggregate(ThreeCriteria(true, "all"), {Answer("pass", "fail", "pass")})));
  // "required" with nothing required: nothing counts.
  EXPECT_TRUE(Pass(Aggregate(ThreeCriteria(false, "required"), {Answer("fail", "fail", "fail")})));
}

TEST(AggregateTest, IndeterminateNeverFailsAndLowConfidenceIsIndeterminate) {
  Rubric rubric = ThreeCriteria(false);
  json::value verdict = Aggregate(rubric, {Answer("indeterminate", "pass", "pass")});
  EXPECT_TRUE(Pass(verdict));
  EXPECT_EQ(verdict.at("indeterminate"), json::parse(R"(["faithful"])"));

  // Confidence 49 is below the default bar of 50: a "fail" becomes indeterminate.
  json::value low = Aggregate(rubric, {Answer("fail", "fail", "fail", 49)});
  EXPECT_TRUE(Pass(low));
  EXPECT_EQ(low.at("indeterminate"), json::parse(R"(["faithful","complete","short"])"));
  // At the bar it counts.
  EXPECT_FALSE(Pass(Aggregate(rubric, {Answer("fail", "pass", "pass", 50)})));
}

TEST(AggregateTest, ExactShapeIgnoresTheModelsPassAndListsFailedCriteriaAsIssues) {
  Rubric rubric = ThreeCriteria(true);
  json::value answer = Answer("fail", "pass", "pass");
  answer.as_object()["issues"] = json::array{"Invents a date.", "Invents a date."};
  answer.as_object()["suggested_fixes"] = json::array{"Drop the date."};
  EXPECT_EQ(Aggregate(rubric, {answer}), json::parse(R"({"pass":false,
      "issues":["Invents a date.","faithful: faithful is fail"],
      "suggested_fixes":["Drop the date."],"indeterminate":[],
      "criteria_results":[
        {"criterion_id":"faithful","verdict":"fail","reasoning":"faithful is fail","confidence":90},
        {"criterion_id":"complete","verdict":"pass","reasoning":"complete is pass","confidence":90},
        {"criterion_id":"short","verdict":"pass","reasoning":"short is pass","confidence":90}]})"));
}

TEST(AggregateTest, SamplesTakeTheMajorityWithAgreement) {
  Rubric rubric = ThreeCriteria(true);
  json::value verdict = Aggregate(
      rubric, {Answer("pass", "pass", "pass"), Answer("fail", "pass", "pass"), Answer("pass", "pass", "pass")});
  EXPECT_TRUE(Pass(verdict));
  const auto& faithful = verdict.at("criteria_results").at(0);
  EXPECT_EQ(faithful.at("verdict"), "pass");
  EXPECT_EQ(faithful.at("agreement").to_number<double>(), 0.67);
  EXPECT_EQ(faithful.at("reasoning"), "faithful is pass");
  EXPECT_EQ(verdict.at("criteria_results").at(1).at("agreement").to_number<double>(), 1.0);
}

TEST(AggregateTest, TiesAreIndeterminate) {
  Rubric rubric = ThreeCriteria(true);
  json::value three_way = Aggregate(rubric, {Answer("pass", "pass", "pass"), Answer("fail", "pass", "pass"),
                                             Answer("indeterminate", "pass", "pass")});
  const auto& faithful = three_way.at("criteria_results").at(0);
  EXPECT_EQ(faithful.at("verdict"), "indeterminate");
  EXPECT_EQ(faithful.at("reasoning"), "the judges split: 1 pass, 1 fail, 1 indeterminate");
  EXPECT_EQ(faithful.at("agreement").to_number<double>(), 0.33);
  EXPECT_TRUE(Pass(three_way));
  EXPECT_EQ(three_way.at("indeterminate"), json::parse(R"(["faithful"])"));

  json::value even = Aggregate(rubric, {Answer("pass", "pass", "pass"), Answer("fail", "pass", "pass")});
  EXPECT_EQ(even.at("criteria_results").at(0).at("verdict"), "indeterminate");
  EXPECT_EQ(even.at("criteria_results").at(0).at("agreement").to_number<double>(), 0.5);
}

TEST(VerdictSchemaTest, ExactSchemaWithReasoningBeforeVerdict) {
  Rubric rubric = ThreeCriteria(true);
  EXPECT_EQ(json::serialize(VerdictSchema(rubric)),
            R"({"type":"object","required":["criteria_results","issues","suggested_fixes"],)"
            R"("additionalProperties":false,"properties":{"criteria_results":{"type":"array","items":)"
            R"({"type":"object","required":["criterion_id","reasoning","verdict","confidence"],)"
            R"("additionalProperties":false,"properties":{"criterion_id":{"enum":["faithful","complete","short"]},)"
            R"("reasoning":{"type":"string"},"verdict":{"enum":["pass","fail","indeterminate"]},)"
            R"("confidence":{"type":"number","minimum":0,"maximum":100}}}},)"
            R"("issues":{"type":"array","items":{"type":"string"}},)"
            R"("suggested_fixes":{"type":"array","items":{"type":"string"}},"pass":{"type":"boolean"}}})");
  auto compiled = validation::CompiledSchema::Compile(VerdictSchema(rubric));
  ASSERT_TRUE(compiled);
  EXPECT_TRUE((*compiled)->Validate(Answer("pass", "fail", "pass")).empty());
}

TEST(VerdictSchemaTest, EveryCriterionExactlyOnce) {
  Rubric rubric = ThreeCriteria(true);
  json::value answer = Answer("pass", "pass", "pass");
  auto& results = answer.at("criteria_results").as_array();
  results[2] = results[0];  // "short" gone, "faithful" twice
  std::vector<FieldError> expected = {{"/criteria_results/2", "criterion \"faithful\" appears more than once"},
                                      {"/criteria_results", "criterion \"short\" is missing"}};
  EXPECT_EQ(CheckEveryCriterionOnce(rubric, answer), expected);
  EXPECT_TRUE(CheckEveryCriterionOnce(rubric, Answer("pass", "pass", "pass")).empty());
}

TEST(JudgePromptTest, ListsCriteriaAndAsksForReasoningFirst) {
  Rubric rubric = ThreeCriteria(true);
  rubric.criteria[2].guidance = "Count sentences only.";
  rubric.criteria[2].examples =
      json::array{json::object{{"subject", "One. Two. Three."}, {"verdict", "fail"}, {"reason", "three sentences"}}};
  std::string system = JudgeSystemPrompt(rubric);
  EXPECT_NE(system.find("- faithful (required): Supported by the text.\n"
                        "- complete: Nothing left out.\n"
                        "- short: Two sentences at most.\n"
                        "  Guidance: Count sentences only.\n"
                        "  Example (fail): One. Two. Three. (three sentences)\n"),
            std::string::npos)
      << system;
  EXPECT_NE(system.find("first write your reasoning, then give the verdict"), std::string::npos);
  json::value context = json::parse(R"({"text":"a"})");
  EXPECT_EQ(JudgeUserPrompt(json::value("It rains."), &context), "Subject:\nIt rains.\n\nContext:\n{\"text\":\"a\"}");
  EXPECT_EQ(JudgeUserPrompt(json::parse(R"({"x":1})"), nullptr), "Subject:\n{\"x\":1}");
}

}  // namespace
}  // namespace skillrunner::review
