#pragma once

// The source files of runner/ and services/ as the discipline tests read them
// (layers, clock, net, errors, include cycles): each named by its path from
// the root, in path order.

#include <filesystem>
#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace skillrunner::test_support {

struct SourceFile {
  std::string path;            // "runner/net/listener.cpp"
  std::filesystem::path file;  // where it is on disk
};

// Every .h and .cpp under root/runner and root/services (only .h with `headers_only`) for which
// `keep` (when given) says yes.
std::vector<SourceFile> RunnerAndServicesSources(const std::filesystem::path& root, bool headers_only = false,
                                                 const std::function<bool(const std::string& path)>& keep = {});

// "PATH:LINE: TEXT" for each line of `files` in which `pattern` finds something.
std::vector<std::string> LinesMatching(const std::vector<SourceFile>& files, const std::regex& pattern);

std::string ReadWhole(const std::filesystem::path& file);

}  // namespace skillrunner::test_support
