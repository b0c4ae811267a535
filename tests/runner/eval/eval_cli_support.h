#pragma once

// Running the real `skillrunner` program from eval tests: a clean
// environment (no OPENAI_*, ANTHROPIC_*, SKILLRUNNER_* variables), stdout
// and stderr captured apart.

#include <sys/types.h>

#include <boost/json/object.hpp>
#include <filesystem>
#include <string>
#include <vector>

namespace skillrunner::eval_test {

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `skillrunner ARGS` (ARGS as shell words) in `dir` and waits;
// `env_vars`: NAME=value words set for it (the sharding variables of
// Kubernetes and GitLab are unset otherwise, like the provider settings).
Ran Skillrunner(const std::filesystem::path& dir, const std::string& args, const std::string& env_vars = "");

// Starts `skillrunner ARGV...` in `dir` without waiting (output discarded).
pid_t Spawn(const std::filesystem::path& dir, const std::vector<std::string>& args);

std::string ReadFile(const std::filesystem::path& file);
std::size_t CountLines(const std::filesystem::path& file);  // complete lines
std::vector<boost::json::object> ReadRecords(const std::filesystem::path& file);

}  // namespace skillrunner::eval_test
