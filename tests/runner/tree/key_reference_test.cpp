// Every key a user writes is documented inside the project (design.md §9.8):
// docs/reference.md is generated from the compiled-in schemas and kept equal.
#include "runner/tree/key_reference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace skillrunner {
namespace {

TEST(KeyReferenceTest, EverySchemaPropertyHasADescription) {
  std::vector<std::string> undescribed = UndescribedKeys();
  std::string listed;
  for (const auto& key : undescribed) listed += key + "\n";
  EXPECT_TRUE(undescribed.empty()) << "give these a \"description\" in their JSON Schema:\n" << listed;
}

TEST(KeyReferenceTest, DocsReferenceIsTheGeneratedReference) {
  std::ifstream in(std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / "docs" / "reference.md", std::ios::binary);
  ASSERT_TRUE(in) << "docs/reference.md is missing: build/skillrunner schema --markdown > docs/reference.md";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), KeyReferenceMarkdown())
      << "docs/reference.md is stale: build/skillrunner schema --markdown > docs/reference.md";
}

TEST(KeyReferenceTest, TheReferenceNamesKeysOfEveryFile) {
  std::string reference = KeyReferenceMarkdown();
  for (const char* key : {"| `review.skill` |", "| `criteria[].required` |", "| `skills[].judge_model` |",
                          "| `providers.<name>.api_key_env` |", "| `models.<name>.structured_output` |"}) {
    EXPECT_NE(reference.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace skillrunner
