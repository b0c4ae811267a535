#include "services/generation/prompt_template.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace skillrunner {
namespace {

TEST(PromptTemplateTest, RendersStringsAsIsAndOtherValuesAsJson) {
  std::string text = "Hi {{input.name}}, tags {{ input.tags }}, first {{input.tags.0}}, all {{input}}";
  auto placeholders = ParsePlaceholders(text);
  ASSERT_TRUE(placeholders);
  ASSERT_EQ(placeholders->size(), 4u);
  auto input = boost::json::parse(R"({"name":"Ada","tags":["x",2]})");
  auto rendered = RenderTemplate(text, *placeholders, input);
  ASSERT_TRUE(rendered);
  EXPECT_EQ(*rendered, R"(Hi Ada, tags ["x",2], first x, all {"name":"Ada","tags":["x",2]})");
}

TEST(PromptTemplateTest, NumbersRenderAsWritten) {
  std::string text = "{{input.price}} x {{input.sizes}}";
  auto placeholders = ParsePlaceholders(text);
  ASSERT_TRUE(placeholders);
  auto rendered = RenderTemplate(text, *placeholders, boost::json::parse(R"({"price": 12.5, "sizes": [0.25, 1e21]})"));
  ASSERT_TRUE(rendered);
  EXPECT_EQ(*rendered, "12.5 x [0.25,1e+21]");
}

TEST(PromptTemplateTest, AnAbsentOptionalValueRendersEmpty) {
  std::string text = "Order {{input.order.id}} for [{{input.tier}}] of {{input.order}}";
  auto placeholders = ParsePlaceholders(text);
  ASSERT_TRUE(placeholders);
  auto rendered = RenderTemplate(text, *placeholders, boost::json::parse(R"({"order":{}})"));
  ASSERT_TRUE(rendered);
  EXPECT_EQ(*rendered, "Order  for [] of {}");
}

TEST(PromptTemplateTest, MalformedPlaceholdersAreRejectedWithTheirOffset) {
  auto bad = ParsePlaceholders("Text: {{inptu.text}}");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().offset, 6u);
  EXPECT_EQ(bad.error().message,
            "malformed placeholder \"{{inptu.text}}\": expected {{input}} or {{input.field.path}}");
  EXPECT_FALSE(ParsePlaceholders("{{input..x}}"));
  EXPECT_FALSE(ParsePlaceholders("{{input.a b}}"));
  auto unclosed = ParsePlaceholders("a {{input.x");
  ASSERT_FALSE(unclosed);
  EXPECT_EQ(unclosed.error().message, "unclosed \"{{\"");
}

}  // namespace
}  // namespace skillrunner
