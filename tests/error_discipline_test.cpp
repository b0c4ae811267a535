// design.md §9.9: one error at the walls. A function declared in a header
// fails with `Error` (`Result<T>`, services/common/error.h), never with a bare
// string: no header of runner/ or services/ other than services/common's
// declares `expected<..., std::string>`, however the declaration is split over
// lines; each one that does is named with its file and the line it starts on.
// (tests/error_type_test.cpp checks the same headers with a scanner that also
// skips comments and string literals.)

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/source_files.h"

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

// `[^;]` and `\s` take line breaks too: a declaration split over lines is found.
const std::regex kStringError(R"(expected<[^;]*,\s*std::string\s*>)");

// "LINE: TEXT" for each match in `text`: the line the match starts on and the
// match's first line.
std::vector<std::string> Matches(const std::string& text) {
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kStringError); it != std::sregex_iterator(); ++it) {
    const auto start = text.begin() + it->position();
    const auto line = 1 + std::count(text.begin(), start, '\n');
    const std::string match = it->str();
    found.push_back(std::to_string(line) + ": " + match.substr(0, match.find('\n')));
  }
  return found;
}

std::vector<std::string> StringErrors(const fs::path& root) {
  std::vector<std::string> found;
  const auto headers = test_support::RunnerAndServicesSources(
      root, true, [](const std::string& path) { return !path.starts_with("services/common/"); });
  for (const auto& header : headers) {
    for (const std::string& match : Matches(test_support::ReadWhole(header.file))) {
      found.push_back(header.path + ":" + match);
    }
  }
  return found;
}

TEST(ErrorDisciplineTest, NoHeaderOutsideServicesCommonDeclaresExpectedWithAStringError) {
  EXPECT_EQ(StringErrors(SKILLRUNNER_SOURCE_DIR), std::vector<std::string>{})
      << "return Result<T> (services/common/error.h)";
}

TEST(ErrorDisciplineTest, TheCheckFindsEachForm) {
  EXPECT_EQ(Matches("std::expected<void, std::string> F();"),
            std::vector<std::string>{"1: expected<void, std::string>"});
  EXPECT_EQ(Matches("// G\nstd::expected<std::vector<int>,\n    std::string> G();"),
            std::vector<std::string>{"2: expected<std::vector<int>,"});
  EXPECT_EQ(Matches("Result<std::string> H();"), std::vector<std::string>{});
  EXPECT_EQ(Matches("std::expected<std::string, Error> I();"), std::vector<std::string>{});
}

}  // namespace
}  // namespace skillrunner
