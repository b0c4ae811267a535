// Every request body the openai provider builds is valid against the schema of
// what we send (tests/support/openai_spec.h).
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"
#include "services/providers/openai_provider.h"
#include "tests/support/openai_spec.h"

namespace skillrunner::providers {
namespace {
namespace json = boost::json;

ChatRequest Request(ResponseFormat::Kind kind) {
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {{"system", "You extract contacts. Answer in JSON."},
                      {"user", "Ada, ada@example.com"},
                      {"assistant", "{\"name\":\"Ada\"}"},
                      {"user", "- /email: required property is missing"}};
  request.temperature = 0.2;
  request.max_output_tokens = 512;
  request.response_format.kind = kind;
  if (kind == ResponseFormat::Kind::kJsonSchema) {
    request.response_format.name = "extract_contact";
    request.response_format.strict = true;
    request.response_format.schema = std::make_shared<const json::value>(json::parse(
        R"({"type":"object","additionalProperties":false,"required":["name","phone"],
            "properties":{"name":{"type":"string"},"phone":{"type":["string","null"]}}})"));
  }
  return request;
}

TEST(OpenAiRequestSpecTest, EveryRequestShapeIsValidAgainstTheSpec) {
  ASSERT_NE(test_support::OpenAiRequestSchema(), nullptr) << test_support::OpenAiSpecDir();
  for (const std::string field : {"max_completion_tokens", "max_tokens"}) {
    OpenAiOptions options;
    options.max_tokens_field = field;
    OpenAiProvider provider(options, nullptr, [](std::string_view) { return std::nullopt; });
    for (auto kind :
         {ResponseFormat::Kind::kNone, ResponseFormat::Kind::kJsonObject, ResponseFormat::Kind::kJsonSchema}) {
      json::object body = provider.RequestBody(Request(kind));
      auto errors = test_support::OpenAiRequestSchema()->Validate(body);
      for (const auto& e : errors)
        ADD_FAILURE() << field << " " << json::serialize(body) << "\n" << e.path << ": " << e.message;
      EXPECT_EQ(body.at(field), 512);
    }
  }
}

TEST(OpenAiRequestSpecTest, TheSpecCatchesABadRequest) {
  ASSERT_NE(test_support::OpenAiRequestSchema(), nullptr) << test_support::OpenAiSpecDir();
  auto errors = test_support::OpenAiRequestSchema()->Validate(
      json::parse(R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"})"));
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].path, "/temperature");
}

TEST(OpenAiRequestSpecTest, AMemberWeDoNotMeanToSendIsCaught) {
  ASSERT_NE(test_support::OpenAiRequestSchema(), nullptr) << test_support::OpenAiSpecDir();
  auto errors = test_support::OpenAiRequestSchema()->Validate(
      json::parse(R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_token":5})"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "/max_token") << errors[0].message;
}

TEST(OpenAiRequestSpecTest, StrictSchemaRequestHasTheDocumentedShape) {
  OpenAiProvider provider(OpenAiOptions{}, nullptr, [](std::string_view) { return std::nullopt; });
  EXPECT_EQ(
      json::serialize(provider.RequestBody(Request(ResponseFormat::Kind::kJsonSchema)).at("response_format")),
      R"({"type":"json_schema","json_schema":{"name":"extract_contact","schema":{"type":"object","additionalProperties":false,"required":["name","phone"],"properties":{"name":{"type":"string"},"phone":{"type":["string","null"]}}},"strict":true}})");
}

TEST(OpenAiRequestSpecTest, TheBodySentIsTheRequestBodyByteForByte) {
  for (const std::string field : {"max_completion_tokens", "max_tokens", "model"}) {
    OpenAiOptions options;
    options.max_tokens_field = field;
    OpenAiProvider provider(options, nullptr, [](std::string_view) { return std::nullopt; });
    for (auto kind : {ResponseFormat::Kind::kNone, ResponseFormat::Kind::kJsonObject, ResponseFormat::Kind::kJsonSchema,
                      ResponseFormat::Kind::kTool}) {
      for (int variant = 0; variant < 4; ++variant) {
        ChatRequest request = Request(kind == ResponseFormat::Kind::kTool ? ResponseFormat::Kind::kJsonSchema : kind);
        request.response_format.kind = kind;
        request.response_format.strict = variant % 2 == 0;
        if (variant >= 2) request.temperature.reset();
        if (variant == 1) request.temperature = 1.0;
        if (variant == 3) request.on_text = [](std::string_view) { return true; };
        request.messages.push_back({"user", "quote \" backslash \\ newline \n tab \t bell \x07 caf\xc3\xa9"});
        EXPECT_EQ(provider.RequestBodyText(request), CompactJson(provider.RequestBody(request)))
            << field << " kind " << static_cast<int>(kind) << " variant " << variant;
      }
    }
  }
}

}  // namespace
}  // namespace skillrunner::providers
