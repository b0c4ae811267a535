#include "tests/runner/eval/eval_cli_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/support/child_process.h"

extern char** environ;

namespace skillrunner::eval_test {
namespace {

bool Isolated(std::string_view entry) {
  return entry.starts_with("OPENAI_") || entry.starts_with("ANTHROPIC_") || entry.starts_with("SKILLRUNNER_") ||
         entry.starts_with("OTEL_") || entry.starts_with("GEMINI_") || entry.starts_with("JOB_COMPLETION") ||
         entry.starts_with("CI_NODE_");
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t CountLines(const std::filesystem::path& file) {
  std::string text = ReadFile(file);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::vector<boost::json::object> ReadRecords(const std::filesystem::path& file) {
  std::vector<boost::json::object> records;
  std::istringstream in(ReadFile(file));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) records.push_back(boost::json::parse(line).as_object());
  }
  return records;
}

Ran Skillrunner(const std::filesystem::path& dir, const std::string& args, const std::string& env_vars) {
  std::string unset;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (Isolated(entry)) unset += " -u " + std::string(entry.substr(0, entry.find('=')));
  }
  std::filesystem::path out = dir / ".stdout", err = dir / ".stderr";
  std::string command = "cd " + Quote(dir.string()) + " && env" + unset + " " + env_vars + " " +
                        Quote(SKILLRUNNER_BINARY) + " " + args + " >" + Quote(out.string()) + " 2>" +
                        Quote(err.string());
  int raw = std::system(command.c_str());
  Ran ran;
  ran.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  ran.out = ReadFile(out);
  ran.err = ReadFile(err);
  return ran;
}

pid_t Spawn(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  return test_support::SpawnProcess(SKILLRUNNER_BINARY, args, test_support::CleanEnvironment(), dir);
}

}  // namespace skillrunner::eval_test
