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

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

const std::regex kDirectRead(R"(\b(steady_clock|system_clock|high_resolution_clock)::now\s*\()");

std::vector<std::string> DirectReads(const fs::path& root) {
  std::vector<std::string> found;
  for (const char* folder : {"runner", "services"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const fs::path& file = entry.path();
      if (!entry.is_regular_file() || (file.extension() != ".cpp" && file.extension() != ".h")) continue;
      const std::string path = fs::relative(file, root).generic_string();
      if (path == "services/common/clock.h" || path == "services/common/clock.cpp") continue;
      std::ifstream in(file);
      int number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        if (std::regex_search(line, kDirectRead)) found.push_back(path + ":" + std::to_string(number) + ": " + line);
      }
    }
  }
  return found;
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
