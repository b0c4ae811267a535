#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::testing {

// A temporary folder, removed with its contents when the object dies.
class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "skillrunner-test-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path Path(std::string_view rel) const { return root_ / rel; }

  // The flags that point a command at this folder as a team's tree: its skillrunner.yaml, skills/ and
  // rubrics/.
  std::vector<std::string> TreeFlags() const {
    return {"--config",  Path("skillrunner.yaml").string(), "--skills", Path("skills").string(),
            "--rubrics", Path("rubrics").string()};
  }

  // Writes `content` to `rel`, creating folders as needed.
  std::filesystem::path Write(std::string_view rel, std::string_view content) const {
    std::filesystem::path path = root_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

 private:
  std::filesystem::path root_;
};

// The whole of a file, or "" when it cannot be read.
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace skillrunner::testing
