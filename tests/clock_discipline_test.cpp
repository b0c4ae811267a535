// design.md §12.1: one clock. Deadlines, durations and timestamps come from a
// Clock (services/common/clock.h): Now() for the steady clock, WallNow() for the
// wall clock, so tests can pin both. No file of runner/ or services/ other than
// the clock's own reads std::chrono's clocks directly; each one that does is
// named with its file and line.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/source_files.h"

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

const std::regex kDirectRead(R"(\b(steady_clock|system_clock|high_resolution_clock)::now\s*\()");

std::vector<std::string> DirectReads(const fs::path& root) {
  const auto files = test_support::RunnerAndServicesSources(root, false, [](const std::string& path) {
    return path != "services/common/clock.h" && path != "services/common/clock.cpp";
  });
  return test_support::LinesMatching(files, kDirectRead);
}

TEST(ClockDisciplineTest, NoFileOutsideTheClockReadsStdChronosClocks) {
  EXPECT_EQ(DirectReads(SKILLRUNNER_SOURCE_DIR), std::vector<std::string>{})
      << "take a Clock& (or RealClock() at a composition root): Now() or WallNow()";
}

TEST(ClockDisciplineTest, TheCheckFindsEachClock) {
  for (const char* line : {"  const auto at = std::chrono::system_clock::now();", "auto t = steady_clock::now ();",
                           "std::chrono::high_resolution_clock::now()"}) {
    EXPECT_TRUE(std::regex_search(std::string(line), kDirectRead)) << line;
  }
  EXPECT_FALSE(std::regex_search(std::string("  const auto at = clock.WallNow();"), kDirectRead));
}

}  // namespace
}  // namespace skillrunner
