// What the real `skillrunner run` prints holds to schemas/: a success is the
// skills.invoke result, a failure's "error" member the error data.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <sstream>

#include "tests/docs/protocol_schemas.h"
#include "tests/docs/protocol_tree.h"
#include "tests/support/cli_runner.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using testing::SchemaViolations;

class ProtocolRunAnswersTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::WriteProtocolTree(tree_); }

  // `run SKILL --input INPUT ARGS`: its exit status and what it printed.
  std::pair<int, json::value> Run(const std::string& skill, const std::string& input, const std::string& args = "") {
    auto result = test_support::Skillrunner(
        tree_.root(), "run --no-tree-cache " + skill + " --input " + test_support::ShellQuote(input) + " " + args);
    boost::system::error_code ec;
    json::value printed = json::parse(result.out, ec);
    EXPECT_FALSE(ec) << "not JSON: " << result.out;
    return {result.status, printed};
  }

  testing::TempTree tree_;
};

TEST_F(ProtocolRunAnswersTest, ASuccessWithItsRequestsIsTheInvokeResult) {
  auto [status, printed] = Run("contact", R"({"text":"Ann wrote"})", "--show-request");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(SchemaViolations("skills.invoke.result.schema.json", printed), "");
  EXPECT_TRUE(printed.at_pointer("/attempts/0").as_object().contains("request")) << json::serialize(printed);
}

TEST_F(ProtocolRunAnswersTest, AGatedSuccessWithItsFirstReviewIsTheInvokeResult) {
  // The shipped tree's demo: the first review fails, the regeneration passes.
  auto result = test_support::Skillrunner(SKILLRUNNER_SOURCE_DIR,
                                          "--provider simulated run --no-tree-cache extract_contact --input "
                                          "'{\"text\":\"Write to Ann Lee at ann@example.com\"}'");
  json::value printed = json::parse(result.out);
  EXPECT_EQ(result.status, 0) << result.out;
  ASSERT_TRUE(printed.at("review").as_object().contains("first")) << result.out;
  EXPECT_EQ(SchemaViolations("skills.invoke.result.schema.json", printed), "");
}

// `run --stream` on the shipped triage_ticket, whose first answer the
// simulated provider's script breaks: partials, a reset, the retry's partials,
// then the result; every notification holds to its params schema.
TEST_F(ProtocolRunAnswersTest, StreamedNotificationsHoldToTheirSchemas) {
  auto result = test_support::Skillrunner(SKILLRUNNER_SOURCE_DIR,
                                          "--provider simulated run --no-tree-cache --stream triage_ticket --input "
                                          "'{\"subject\":\"Cannot log in\",\"body\":\"The password is refused.\"}'");
  EXPECT_EQ(result.status, 0) << result.out;
  std::vector<std::string> methods;
  std::istringstream lines(result.out);
  json::value last;
  for (std::string line; std::getline(lines, line);) {
    last = json::parse(line);
    if (!last.as_object().contains("method")) continue;
    const std::string method(last.at("method").as_string());
    methods.push_back(method);
    EXPECT_FALSE(last.as_object().contains("id")) << line;
    EXPECT_EQ(SchemaViolations(method + ".params.schema.json", last.at("params")), "") << line;
  }
  EXPECT_EQ(methods, (std::vector<std::string>{"skills.partial", "skills.reset", "skills.partial"})) << result.out;
  EXPECT_EQ(SchemaViolations("skills.invoke.result.schema.json", last), "") << result.out;
}

TEST_F(ProtocolRunAnswersTest, EveryFailureIsTheErrorData) {
  struct Case {
    std::string skill, input, code;
    int status;
  };
  const std::vector<Case> cases = {
      {"contact", R"({"text":1})", "INPUT_INVALID", 2},
      {"contactt", "{}", "SKILL_NOT_FOUND", 2},
      {"broken", R"({"text":"x"})", "CONFIG_INVALID", 2},
      {"invalid", R"({"text":"x"})", "MAX_RETRIES_EXCEEDED", 4},
      {"truncated", R"({"text":"x"})", "TRUNCATED", 4},
      {"refused", R"({"text":"x"})", "REFUSED", 4},
      {"filtered", R"({"text":"x"})", "CONTENT_FILTERED", 4},
      {"unavailable", R"({"text":"x"})", "PROVIDER_UNAVAILABLE", 3},
      {"failing", "{}", "HANDLER_FAILED", 3},
      {"judged", R"({"subject":{"name":"Ann"},"context":{"text":"Ann"}})", "JUDGE_ERROR", 4},
      {"budget", R"({"text":"x"})", "BUDGET_EXCEEDED", 4},
      {"limited", R"({"text":"x"})", "OVERLOADED", 3},
  };
  for (const auto& c : cases) {
    auto [status, printed] = Run(c.skill, c.input);
    EXPECT_EQ(status, c.status) << c.skill;
    ASSERT_TRUE(printed.is_object() && printed.as_object().contains("error")) << c.skill;
    EXPECT_EQ(printed.at_pointer("/error/code"), c.code.c_str()) << json::serialize(printed);
    EXPECT_EQ(SchemaViolations("error-data.schema.json", printed.at("error")), "") << c.skill;
  }
  auto [status, printed] = Run("contact", R"({"text":"x"})", "--timeout-ms 1");
  EXPECT_EQ(status, 3);
  EXPECT_EQ(printed.at_pointer("/error/code"), "TIMEOUT") << json::serialize(printed);
  EXPECT_EQ(SchemaViolations("error-data.schema.json", printed.at("error")), "");
}

}  // namespace
}  // namespace skillrunner
