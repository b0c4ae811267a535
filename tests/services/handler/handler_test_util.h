#pragma once

// Helpers for tests that run real child processes: a temporary skill folder
// with scripts in it, and a check that a pid is no longer running.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace skillrunner::handler::test_util {

// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "skillrunner-handler-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

  // Writes `content` to `name` (folders created), executable if asked.
  std::filesystem::path Write(const std::string& name, const std::string& content, bool executable = false) const {
    std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << content;
    if (executable) ::chmod(file.c_str(), 0755);
    return file;
  }

  std::string Read(const std::string& name) const {
    std::ifstream in(path_ / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path path_;
};

// True while `pid` exists and is not a zombie. (Orphans that we killed may
// stay zombies here: a container's pid 1 does not always reap them.)
inline bool IsRunning(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// Waits up to `limit` for `pid` to stop running (signal delivery to a
// process group is not instantaneous for its other members).
inline bool StopsRunning(pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (IsRunning(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

inline pid_t ReadPid(const TempDir& dir, const std::string& name) {
  return static_cast<pid_t>(std::stol(dir.Read(name)));
}

}  // namespace skillrunner::handler::test_util
