#include "tests/support/source_files.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace skillrunner::test_support {
namespace fs = std::filesystem;

std::vector<SourceFile> RunnerAndServicesSources(const fs::path& root, bool headers_only,
                                                 const std::function<bool(const std::string& path)>& keep) {
  std::vector<SourceFile> files;
  for (const char* folder : {"runner", "services"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const fs::path& file = entry.path();
      const bool header = file.extension() == ".h";
      if (!entry.is_regular_file() || !(header || (!headers_only && file.extension() == ".cpp"))) continue;
      std::string path = fs::relative(file, root).generic_string();
      if (keep && !keep(path)) continue;
      files.push_back(SourceFile{std::move(path), file});
    }
  }
  std::sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  return files;
}

std::vector<std::string> LinesMatching(const std::vector<SourceFile>& files, const std::regex& pattern) {
  std::vector<std::string> found;
  for (const SourceFile& source : files) {
    std::ifstream in(source.file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (std::regex_search(line, pattern)) found.push_back(source.path + ":" + std::to_string(number) + ": " + line);
    }
  }
  return found;
}

std::string ReadWhole(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace skillrunner::test_support
