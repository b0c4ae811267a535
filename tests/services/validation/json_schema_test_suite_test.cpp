// Runs the official JSON-Schema-Test-Suite (Debian's json-schema-test-suite)
// against CompiledSchema. Core tests are gated: a schema that compiles must
// give the right answer for every instance. A schema that fails to compile
// is counted as skipped (unsupported) and its reason printed. Optional tests
// (formats, bignum, ...) are reported, not gated. Nothing touches the network:
// remote refs resolve to the suite's remotes/ and the metaschemas to
// services/validation/metaschemas/ (the copies the product embeds).
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "services/validation/compiled_schema.h"

namespace skillrunner::validation {
namespace {

namespace fs = std::filesystem;

const fs::path kSuite = "/usr/share/json-schema-test-suite";

// Test descriptions known to be answered wrongly, as "file: group: test".
// Keep tiny and justify each entry.
const std::set<std::string> kKnownWrong = {};

std::optional<boost::json::value> ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str());
}

std::optional<boost::json::value> FetchLocal(std::string_view uri) {
  std::string_view name = uri;
  if (auto hash = name.find('#'); hash != std::string_view::npos) name = name.substr(0, hash);
  if (name.starts_with("http://localhost:1234/")) {
    return ReadJson(kSuite / "remotes" / std::string(name.substr(22)));
  }
  const fs::path metaschemas = SKILLRUNNER_SOURCE_DIR "/services/validation/metaschemas";
  if (name == "http://json-schema.org/draft-07/schema") return ReadJson(metaschemas / "draft-07.schema.json");
  if (name == "http://json-schema.org/draft-04/schema") return ReadJson(metaschemas / "draft-04.schema.json");
  return std::nullopt;
}

struct Counts {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  std::vector<std::string> skip_reasons;
  std::vector<std::string> failures;
};

void RunFile(const fs::path& file, std::string_view draft, Counts& counts) {
  auto groups = ReadJson(file);
  ASSERT_TRUE(groups && groups->is_array()) << file;
  CompileOptions options;
  options.fetch = FetchLocal;
  for (const auto& group : groups->get_array()) {
    boost::json::value schema = group.at("schema");
    if (draft == "draft4" && schema.is_object() && !schema.as_object().contains("$schema")) {
      schema.as_object()["$schema"] = "http://json-schema.org/draft-04/schema#";
    }
    const std::string group_name = file.filename().string() + ": " + std::string(group.at("description").as_string());
    const auto& tests = group.at("tests").as_array();
    auto compiled = CompiledSchema::Compile(schema, options);
    if (!compiled) {
      counts.skipped += static_cast<int>(tests.size());
      counts.skip_reasons.push_back(group_name + " -> " + compiled.error().message);
      continue;
    }
    for (const auto& test : tests) {
      const std::string name = group_name + ": " + std::string(test.at("description").as_string());
      const bool expected = test.at("valid").as_bool();
      const auto errors = (*compiled)->Validate(test.at("data"));
      if (errors.empty() == expected || kKnownWrong.contains(name)) {
        ++counts.passed;
      } else {
        ++counts.failed;
        counts.failures.push_back(name + (expected ? " (rejected: " + errors[0].message + ")" : " (accepted)"));
      }
    }
  }
}

Counts RunDirectory(const fs::path& dir, std::string_view draft, bool recursive) {
  Counts counts;
  std::vector<fs::path> files;
  if (recursive) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) RunFile(file, draft, counts);
  return counts;
}

class JsonSchemaTestSuiteTest : public testing::TestWithParam<std::string> {};

TEST_P(JsonSchemaTestSuiteTest, CoreTestsPassAndOptionalAreReported) {
  const fs::path tests = kSuite / "tests" / GetParam();
  if (!fs::exists(tests)) GTEST_SKIP() << tests << " is missing (install json-schema-test-suite)";
  Counts core = RunDirectory(tests, GetParam(), false);
  Counts optional = fs::exists(tests / "optional") ? RunDirectory(tests / "optional", GetParam(), true) : Counts{};
  std::cout << GetParam() << " core: " << core.passed << " passed, " << core.failed << " failed, " << core.skipped
            << " skipped (unsupported); optional: " << optional.passed << " passed, " << optional.failed << " failed, "
            << optional.skipped << " skipped (unsupported)\n";
  for (const auto& reason : core.skip_reasons) std::cout << "  core skipped: " << reason << "\n";
  for (const auto& failure : optional.failures) std::cout << "  optional wrong: " << failure << "\n";
  for (const auto& reason : optional.skip_reasons) std::cout << "  optional skipped: " << reason << "\n";
  for (const auto& failure : core.failures) ADD_FAILURE() << "wrong answer: " << failure;
}

INSTANTIATE_TEST_SUITE_P(Drafts, JsonSchemaTestSuiteTest, testing::Values("draft7", "draft4"));

}  // namespace
}  // namespace skillrunner::validation
