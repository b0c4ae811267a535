#include "services/generation/structured_generator.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
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
