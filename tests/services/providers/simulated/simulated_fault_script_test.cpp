#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "services/providers/simulated/fault_script.h"

namespace skillrunner::providers {
namespace {

namespace json = boost::json;

std::string ErrorOf(std::string_view script, FaultScriptScope scope = FaultScriptScope::kSkill) {
  auto parsed = ParseFaultScript(json::parse(script), scope);
  return parsed ? "(parsed)" : parsed.error().message;
}

TEST(FaultScriptTest, ParsesEveryFieldOfAnEntry) {
  auto parsed = ParseFaultScript(json::parse(R"([
      {"attempt": [1, 2], "fault": "wrong_type", "path": "/priority"},
      {"attempt": 3, "fault": "rate_limit", "retry_after_s": 1.5},
      {"attempt": 4, "fault": "unavailable", "status": 529, "retry_after_ms": 150},
      {"attempt": 1, "fault": "verdict", "criterion": "faithful", "verdict": "indeterminate", "confidence": 40}])"));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 4u);
  const auto& faults = *parsed;
  EXPECT_EQ(faults[0].kind, FaultKind::kWrongType);
  EXPECT_EQ(faults[0].attempts, (std::vector<int>{1, 2}));
  EXPECT_EQ(faults[0].path, "/priority");
  EXPECT_EQ(faults[1].retry_after, std::chrono::milliseconds(1500));
  EXPECT_EQ(faults[2].status, 529);
  EXPECT_EQ(faults[2].retry_after, std::chrono::milliseconds(150));
  EXPECT_EQ(faults[3].criterion, "faithful");
  EXPECT_EQ(faults[3].verdict, "indeterminate");
  EXPECT_EQ(faults[3].confidence, 40);
  EXPECT_EQ(FaultKindName(faults[3].kind), "verdict");
}

TEST(FaultScriptTest, ProbabilityIsANumberFromZeroToOne) {
  auto parsed = ParseFaultScript(json::parse(R"([{"attempt": 1, "fault": "refusal", "probability": 0.25},
      {"attempt": 1, "fault": "fence"}])"));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ((*parsed)[0].probability, 0.25);
  EXPECT_EQ((*parsed)[1].probability, 1.0);
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "refusal", "probability": 1.5}])"),
            "/0/probability: expected a number from 0 to 1, found 1.5");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "refusal", "probabilty": 0.5}])"),
            "/0/probabilty: unknown key \"probabilty\" (did you mean \"probability\"?)");
}

TEST(FaultScriptTest, NullIsAnEmptyScript) {
  auto parsed = ParseFaultScript(json::value());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(parsed->empty());
}

TEST(FaultScriptTest, ErrorsNameTheEntryByPointer) {
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "wrng_type"}])"),
            "/0/fault: unknown fault \"wrng_type\" (did you mean \"wrong_type\"?)");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "explode"}])"), "/0/fault: unknown fault \"explode\"");
  EXPECT_EQ(ErrorOf(R"({"attempt": 1})"), "(root): expected an array of fault entries, found {\"attempt\":1}");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence"}, "prose"])"), "/1: expected an object, found \"prose\"");
  EXPECT_EQ(ErrorOf(R"([{"fault": "fence"}])"), "/0: missing key \"attempt\"");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1}])"), "/0: missing key \"fault\"");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 0, "fault": "fence"}])"),
            "/0/attempt: expected a positive attempt number, found 0");
  EXPECT_EQ(ErrorOf(R"([{"attempt": [1, "2"], "fault": "fence"}])"),
            "/0/attempt/1: expected a positive attempt number, found \"2\"");
  EXPECT_EQ(ErrorOf(R"([{"attempt": [], "fault": "fence"}])"),
            "/0/attempt: expected at least one attempt number, found []");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "atempt": 2}])"),
            "/0/atempt: unknown key \"atempt\" (did you mean \"attempt\"?)");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "missing_field", "path": "priority"}])"),
            "/0/path: expected a JSON pointer (\"\" or \"/name\"), found \"priority\"");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "path": "/a"}])"), "/0/path: not used by fault \"fence\"");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "unavailable", "status": 400}])"),
            "/0/status: expected a retryable HTTP status (408, 409, 429 or 500-599), found 400");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "rate_limit", "retry_after_ms": 1, "retry_after_s": 1}])"),
            "/0/retry_after_s: give either retry_after_ms or retry_after_s, not both");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "rate_limit", "retry_after_ms": -1}])"),
            "/0/retry_after_ms: expected a non-negative number, found -1");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "verdict", "verdict": "maybe"}])"),
            "/0/verdict: expected one of \"pass\", \"fail\", \"indeterminate\", found \"maybe\"");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "verdict", "confidence": 101}])"),
            "/0/confidence: expected a number from 0 to 100, found 101");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "skill": "x"}])"),
            "/0/skill: \"skill\" is only allowed in the provider config's faults");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "skill": "x"}])", FaultScriptScope::kConfig), "(parsed)");
}

TEST(FaultScriptTest, SkillEntriesWinOverConfigEntriesForTheSameAttempt) {
  auto skill = ParseFaultScript(json::parse(R"([{"attempt": 1, "fault": "fence"}])"));
  auto config = ParseFaultScript(json::parse(R"([
      {"attempt": [1, 2], "fault": "prose"},
      {"attempt": 2, "fault": "truncate", "skill": "other"},
      {"attempt": 3, "fault": "refusal", "skill": "mine"}])"),
                                 FaultScriptScope::kConfig);
  ASSERT_TRUE(skill && config);
  auto first = FaultsForAttempt(*skill, *config, "mine", 0, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].kind, FaultKind::kFence);
  auto second = FaultsForAttempt(*skill, *config, "mine", 0, 2);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].kind, FaultKind::kProse);
  auto third = FaultsForAttempt(*skill, *config, "mine", 0, 3);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].kind, FaultKind::kRefusal);
  EXPECT_TRUE(FaultsForAttempt(*skill, *config, "other", 0, 3).empty());
  EXPECT_TRUE(FaultsForAttempt(*skill, *config, "mine", 0, 4).empty());
}

// design.md §11.2: a config entry may target one version of a skill (a rollout's candidate).
TEST(FaultScriptTest, AConfigEntryWithAVersionFiresOnlyForThatVersionOfTheSkill) {
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "version": 2}])"),
            "/0/version: \"version\" is only allowed in the provider config's faults");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "version": 0}])", FaultScriptScope::kConfig),
            "/0/version: expected a skill version (an integer of at least 1), found 0");
  EXPECT_EQ(ErrorOf(R"([{"attempt": 1, "fault": "fence", "version": "2"}])", FaultScriptScope::kConfig),
            "/0/version: expected a skill version (an integer of at least 1), found \"2\"");
  auto config = ParseFaultScript(json::parse(R"([{"attempt": 1, "fault": "fence", "skill": "mine", "version": 2},
                                                 {"attempt": 1, "fault": "prose", "version": 1}])"),
                                 FaultScriptScope::kConfig);
  ASSERT_TRUE(config) << config.error().message;
  auto candidate = FaultsForAttempt({}, *config, "mine", 2, 1);
  ASSERT_EQ(candidate.size(), 1u);
  EXPECT_EQ(candidate[0].kind, FaultKind::kFence);
  auto stable = FaultsForAttempt({}, *config, "mine", 1, 1);
  ASSERT_EQ(stable.size(), 1u);
  EXPECT_EQ(stable[0].kind, FaultKind::kProse);
  EXPECT_TRUE(FaultsForAttempt({}, *config, "mine", 0, 1).empty());  // a request of no known version
}

TEST(FaultScriptTest, DocumentationNamesEveryKind) {
  std::string_view doc = FaultScriptDocumentation();
  for (std::string_view kind :
       {"missing_field", "wrong_type", "out_of_range", "extra_field", "prose", "fence", "invalid_json", "truncate",
        "refusal", "content_filter", "rate_limit", "unavailable", "verdict"}) {
    EXPECT_NE(doc.find(kind), std::string_view::npos) << kind;
  }
}

}  // namespace
}  // namespace skillrunner::providers
