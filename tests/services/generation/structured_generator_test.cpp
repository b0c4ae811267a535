#include "services/generation/structured_generator.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <vector>

#include "services/common/clock.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::generation {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;

// Answers every request with {"ok": true} and keeps the schema each sent.
class SchemaRecorder : public providers::Provider {
 public:
  asio::awaitable<providers::ChatResult> Chat(const providers::ChatRequest& request) override {
    sent.push_back(request.response_format.schema);
    providers::ChatResponse answer;
    answer.text = R"({"ok":true})";
    co_return answer;
  }
  std::vector<std::shared_ptr<const json::value>> sent;
};

class StructuredGeneratorTest : public ::testing::Test {
 protected:
  StructuredGeneratorTest() {
    auto schema = std::make_shared<AnswerSchema>();
    schema->original = json::parse(R"({"type":"object","properties":{"ok":{"type":"boolean"}}})");
    schema->text = R"({"type":"object","properties":{"ok":{"type":"boolean"}}})";
    schema->compiled = *validation::CompiledSchema::Compile(schema->original);
    schema->strict_wire = json::parse(
        R"({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false})");
    schema_ = schema;
    spec_.skill_id = spec_.task_id = "s";
    spec_.model = "m";
    spec_.provider = "p";
    spec_.mode = OutputMode::kNative;
    spec_.schema_name = "s";
  }

  // One generation of spec_, as one invocation.
  Result<Produced> Generate() {
    asio::io_context io;
    StructuredGenerator generator([this](std::string_view) { return &provider_; }, downgrades_);
    InvocationContext ctx("s", {}, RealClock().Now() + std::chrono::seconds(10), RealClock());
    Prompt prompt;
    prompt.system = "system";
    prompt.user = "user";
    auto done = asio::co_spawn(io, generator.Generate(spec_, std::move(prompt), ctx), asio::use_future);
    io.run();
    return done.get();
  }

  std::shared_ptr<AnswerSchema> schema_;
  GenerationSpec spec_;
  SchemaRecorder provider_;
  ModelDowngrades downgrades_;
};

TEST_F(StructuredGeneratorTest, EveryRequestPointsAtTheSkillsOneWireSchema) {
  ShareWire(*schema_);
  spec_.schema = schema_;
  ASSERT_TRUE(Generate().has_value());
  ASSERT_TRUE(Generate().has_value());
  ASSERT_EQ(provider_.sent.size(), 2u);
  EXPECT_EQ(provider_.sent[0].get(), schema_->wire.get());
  EXPECT_EQ(provider_.sent[1].get(), schema_->wire.get());
  EXPECT_EQ(*provider_.sent[0], schema_->strict_wire);
}

TEST_F(StructuredGeneratorTest, ASchemaWithoutASharedWireSendsItsStrictCopy) {
  spec_.schema = schema_;  // built by hand: no ShareWire
  ASSERT_TRUE(Generate().has_value());
  ASSERT_EQ(provider_.sent.size(), 1u);
  ASSERT_NE(provider_.sent[0], nullptr);
  EXPECT_EQ(*provider_.sent[0], schema_->strict_wire);
}

TEST_F(StructuredGeneratorTest, WithoutAStrictCopyTheWireIsTheSchemaAsWritten) {
  schema_->strict_wire = nullptr;
  ShareWire(*schema_);
  spec_.schema = schema_;
  ASSERT_TRUE(Generate().has_value());
  ASSERT_EQ(provider_.sent.size(), 1u);
  EXPECT_EQ(provider_.sent[0].get(), schema_->wire.get());
  EXPECT_EQ(*provider_.sent[0], schema_->original);
}

}  // namespace
}  // namespace skillrunner::generation

namespace skillrunner::generation {
namespace {

// Answers each request with the next of `answers` (the last again when they run out) and keeps the
// response format of each.
class ScriptedAnswers : public providers::Provider {
 public:
  explicit ScriptedAnswers(std::vector<std::string> answers) : answers_(std::move(answers)) {}
  asio::awaitable<providers::ChatResult> Chat(const providers::ChatRequest& request) override {
    formats.push_back(request.response_format.kind);
    providers::ChatResponse answer;
    answer.text = answers_[std::min(formats.size(), answers_.size()) - 1];
    co_return answer;
  }
  std::vector<providers::ResponseFormat::Kind> formats;

 private:
  std::vector<std::string> answers_;
};

class NativeViolationTest : public ::testing::Test {
 protected:
  NativeViolationTest() {
    // The skill wants ok to be true; the strict copy it sends can only say boolean.
    auto schema = std::make_shared<AnswerSchema>();
    schema->original = json::parse(R"({"type":"object","properties":{"ok":{"type":"boolean","const":true}}})");
    schema->text = json::serialize(schema->original);
    schema->compiled = *validation::CompiledSchema::Compile(schema->original);
    schema->strict_wire = json::parse(
        R"({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false})");
    ShareWire(*schema);
    spec_.schema = schema;
    spec_.skill_id = spec_.task_id = "s";
    spec_.model = "m";
    spec_.provider = "p";
    spec_.mode = OutputMode::kNative;
    spec_.schema_name = "s";
    spec_.retry.validation_retries = 0;
  }

  // One invocation's generation: its attempts and metrics.
  std::pair<std::vector<Attempt>, Metrics> Generate(providers::Provider& provider) {
    asio::io_context io;
    StructuredGenerator generator([&](std::string_view) { return &provider; }, downgrades_);
    InvocationContext ctx("s", {}, RealClock().Now() + std::chrono::seconds(10), RealClock());
    Prompt prompt;
    prompt.system = "system";
    prompt.user = "user";
    auto done = asio::co_spawn(io, generator.Generate(spec_, std::move(prompt), ctx), asio::use_future);
    io.run();
    auto result = done.get();
    std::vector<Attempt> attempts = ctx.attempts();
    if (result) attempts.push_back(*result->attempt);
    return {attempts, ctx.metrics()};
  }

  GenerationSpec spec_;
  ModelDowngrades downgrades_;
};

TEST_F(NativeViolationTest, TheThirdAnswerOutsideTheWireSchemaSendsTheModelToTheLoop) {
  ScriptedAnswers provider({R"({"ok":"yes"})", R"(not json at all)", R"({"ok":1})", R"({"ok":true})"});
  for (int i = 0; i < 3; ++i) {
    auto [attempts, metrics] = Generate(provider);
    ASSERT_EQ(attempts.size(), 1u);
    EXPECT_TRUE(attempts[0].native_violation) << i;
    EXPECT_EQ(attempts[0].native_downgrade, i == 2) << i;
    EXPECT_EQ(metrics.native_downgraded, i == 2 ? "m" : "") << i;
    EXPECT_TRUE(ToJson(attempts[0]).as_object().contains("native_violation"));
  }
  auto [attempts, metrics] = Generate(provider);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].kind, AttemptKind::kOk);
  EXPECT_EQ(provider.formats,
            (std::vector<providers::ResponseFormat::Kind>{
                providers::ResponseFormat::Kind::kJsonSchema, providers::ResponseFormat::Kind::kJsonSchema,
                providers::ResponseFormat::Kind::kJsonSchema, providers::ResponseFormat::Kind::kNone}));
  EXPECT_TRUE(downgrades_.IsDowngraded("m"));
}

TEST_F(NativeViolationTest, AnAnswerTheWireSchemaAllowsIsTheSkillsFailureNotTheProviders) {
  ScriptedAnswers provider({R"({"ok":false})"});
  for (int i = 0; i < 4; ++i) {
    auto [attempts, metrics] = Generate(provider);
    ASSERT_EQ(attempts.size(), 1u);
    EXPECT_EQ(attempts[0].kind, AttemptKind::kValidation);
    EXPECT_FALSE(attempts[0].native_violation);
  }
  EXPECT_FALSE(downgrades_.IsDowngraded("m"));
}

TEST(ModelDowngradesTest, ViolationsOlderThanTenMinutesDoNotCount) {
  ModelDowngrades downgrades;
  const Clock::TimePoint t0{};
  EXPECT_FALSE(downgrades.NoteViolation("m", t0));
  EXPECT_FALSE(downgrades.NoteViolation("m", t0 + std::chrono::minutes(6)));
  EXPECT_FALSE(downgrades.NoteViolation("m", t0 + std::chrono::minutes(11)));  // the first has left the window
  EXPECT_FALSE(downgrades.IsDowngraded("m"));
  EXPECT_TRUE(downgrades.NoteViolation("m", t0 + std::chrono::minutes(12)));
  EXPECT_TRUE(downgrades.IsDowngraded("m"));
  EXPECT_FALSE(downgrades.NoteViolation("m", t0 + std::chrono::minutes(13)));  // once
}

}  // namespace
}  // namespace skillrunner::generation
