#include "services/handler/builtin_handlers.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <chrono>

#include "tests/services/handler/handler_test_util.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::handler {
namespace {

namespace json = boost::json;
using test_support::RunAwaitable;

// Stands in for the exec handler: records that it was asked.
class FakeExec : public Handler {
 public:
  boost::asio::awaitable<Result<json::value>> Execute(const HandlerSpec& spec, const json::value&, InvocationContext&,
                                                      Attempt&) override {
    ++calls;
    co_return json::value(json::object{{"ran", spec.skill_id}});
  }
  int calls = 0;
};

class HandlerServiceTest : public ::testing::Test {
 protected:
  HandlerSpec MakeSkill(std::string handler) {
    HandlerSpec skill;
    skill.skill_id = "handler_skill";
    skill.handler = std::move(handler);
    return skill;
  }

  Result<json::value> Run(const HandlerSpec& skill, const json::value& input) {
    return RunAwaitable(service_.Run(skill, input, ctx_));
  }

  FakeExec exec_;
  HandlerService service_{exec_};
  InvocationContext ctx_{"handler_skill", {}, RealClock().Now() + std::chrono::seconds(60), RealClock()};
};

TEST_F(HandlerServiceTest, EchoReturnsTheInputUnchanged) {
  json::value input = json::parse(R"({"text": "hi", "nested": {"list": [1, null]}})");
  auto result = Run(MakeSkill("echo"), input);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, input);
  ASSERT_EQ(ctx_.attempts().size(), 1u);
  EXPECT_EQ(ctx_.attempts()[0].kind, AttemptKind::kOk);
  EXPECT_EQ(ctx_.attempts()[0].raw, R"({"text":"hi","nested":{"list":[1,null]}})");
  EXPECT_EQ(ctx_.metrics().mode, RunMode::kHandler);
  EXPECT_EQ(exec_.calls, 0);
}

TEST_F(HandlerServiceTest, ExecGoesToTheExecHandler) {
  auto result = Run(MakeSkill("exec"), json::object{});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, json::parse(R"({"ran": "handler_skill"})"));
  EXPECT_EQ(exec_.calls, 1);
}

TEST_F(HandlerServiceTest, UnknownHandlerIsHandlerFailed) {
  auto result = Run(MakeSkill("telepathy"), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(result.error().message, "unknown handler 'telepathy'");
  EXPECT_EQ(exec_.calls, 0);
}

TEST(HandlerServiceWithRunnerTest, RunsExecSkillsAsChildProcesses) {
  test_util::TempDir dir;
  AsioProcessRunner runner;
  HandlerService service(runner);
  HandlerSpec skill;
  skill.skill_id = "cat";
  skill.handler = "exec";
  skill.command = {"cat"};
  skill.dir = dir.path();
  InvocationContext ctx("cat", {}, RealClock().Now() + std::chrono::seconds(60), RealClock());
  auto result = RunAwaitable(service.Run(skill, json::parse(R"({"x": 1})"), ctx));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, json::parse(R"({"x": 1})"));
}

TEST(IsKnownHandlerTest, KnowsExecAndTheBuiltins) {
  EXPECT_TRUE(IsKnownHandler("exec"));
  EXPECT_TRUE(IsKnownHandler("echo"));
  EXPECT_FALSE(IsKnownHandler("telepathy"));
  EXPECT_FALSE(IsKnownHandler(""));
  EXPECT_FALSE(IsKnownHandler("Echo"));
  EXPECT_NE(FindBuiltinHandler("echo"), nullptr);
  EXPECT_EQ(FindBuiltinHandler("exec"), nullptr);
}

}  // namespace
}  // namespace skillrunner::handler
