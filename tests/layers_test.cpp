// design.md §9.1: the layers point one way. Every `#include "..."` under runner/
// and services/ must go to its own folder or to one that layers.txt allows.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

struct LayerTable {
  // folder -> the folders it may include; {"*"} for any.
  std::map<std::string, std::vector<std::string>> allowed;

  static LayerTable Parse(const std::string& text) {
    LayerTable table;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::vector<std::string> deps;
      std::istringstream words(line.substr(colon + 1));
      for (std::string word; words >> word;) deps.push_back(word);
      table.allowed[line.substr(0, colon)] = std::move(deps);
    }
    return table;
  }

  // The deepest folder of the table that holds `path` ("" when none does).
  std::string FolderOf(const std::string& path) const {
    std::string best;
    for (const auto& [folder, unused] : allowed) {
      if (path.rfind(folder + "/", 0) == 0 && folder.size() > best.size()) best = folder;
    }
    return best;
  }
};

// "FILE:LINE: FOLDER may not include TARGET (it may include: ...)" for each
// forbidden include of `text`, the file at `path`.
std::vector<std::string> ForbiddenIncludes(const LayerTable& table, const std::string& path, const std::string& text) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<std::string> out;
  const std::string from = table.FolderOf(path);
  const auto& deps = table.allowed.at(from);
  if (deps.size() == 1 && deps[0] == "*") return out;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::smatch match;
    if (!std::regex_search(line, match, kInclude)) continue;
    const std::string target = match[1];
    const std::string to = table.FolderOf(target);
    if (to.empty() && target.rfind("runner/", 0) != 0 && target.rfind("services/", 0) != 0 &&
        target.rfind("tests/", 0) != 0) {
      continue;  // not the project's (a generated or third-party header)
    }
    if (to == from || std::find(deps.begin(), deps.end(), to) != deps.end()) continue;
    std::string may;
    for (const auto& dep : deps) may += (may.empty() ? "" : ", ") + dep;
    out.push_back(path + ":" + std::to_string(number) + ": " + from + " may not include " + target +
                  " (it may include: " + (may.empty() ? "nothing else of the project" : may) + ")");
  }
  return out;
}

using skillrunner::testing::ReadFile;

const char* kTable = R"(# comment
services/common:
services/providers: services/http services/common
runner: services/providers services/common
runner/cli: *
)";

TEST(LayersTest, TheTableParsesAndPlacesFilesInTheirDeepestFolder) {
  LayerTable table = LayerTable::Parse(kTable);
  EXPECT_EQ(table.allowed.size(), 4u);
  EXPECT_EQ(table.FolderOf("runner/cli/cli.cpp"), "runner/cli");
  EXPECT_EQ(table.FolderOf("runner/tree/skill.h"), "runner");
  EXPECT_EQ(table.FolderOf("services/common/error.h"), "services/common");
}

TEST(LayersTest, AForbiddenIncludeIsNamedWithItsFileAndLine) {
  LayerTable table = LayerTable::Parse(kTable);
  const std::string text =
      "#pragma once\n#include <vector>\n#include \"services/common/error.h\"\n#include \"runner/tree/skill.h\"\n";
  EXPECT_EQ(ForbiddenIncludes(table, "services/providers/retrying_provider.h", text),
            std::vector<std::string>{"services/providers/retrying_provider.h:4: services/providers may not include "
                                     "runner/tree/skill.h (it may include: services/http, services/common)"});
  EXPECT_EQ(ForbiddenIncludes(table, "services/common/x.h", "#include \"services/providers/provider.h\"\n"),
            std::vector<std::string>{"services/common/x.h:1: services/common may not include "
                                     "services/providers/provider.h (it may include: nothing else of the project)"});
  EXPECT_TRUE(ForbiddenIncludes(table, "runner/cli/main.cpp", "#include \"services/http/x.h\"\n").empty());
  EXPECT_TRUE(ForbiddenIncludes(table, "runner/tree/skill.h", "#include \"services/providers/provider.h\"\n").empty());
}

TEST(LayersTest, EveryIncludeOfRunnerAndServicesFollowsTheLayerTable) {
  const fs::path root = SKILLRUNNER_SOURCE_DIR;
  LayerTable table = LayerTable::Parse(ReadFile(root / "layers.txt"));
  ASSERT_TRUE(table.allowed.contains("services/common")) << "layers.txt is missing or empty";
  std::vector<std::string> problems;
  std::size_t files = 0;
  for (const char* top : {"runner", "services"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      const std::string path = fs::relative(entry.path(), root).generic_string();
      if (table.FolderOf(path).empty()) {
        problems.push_back(path + ": its folder has no row in layers.txt");
        continue;
      }
      ++files;
      for (auto& problem : ForbiddenIncludes(table, path, ReadFile(entry.path()))) problems.push_back(problem);
    }
  }
  EXPECT_GT(files, 100u);
  std::string all;
  for (const auto& problem : problems) all += problem + "\n";
  EXPECT_TRUE(problems.empty()) << all;
}

}  // namespace
}  // namespace skillrunner
