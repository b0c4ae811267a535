#include "tests/runner/eval/eval_cli_support.h"

#include <boost/json/parse.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace skillrunner::eval_test {
namespace {

bool Isolated(std::string_view entry) {
  return entry.starts_with("OPENAI_") || entry.starts_with("ANTHROPIC_") || entry.starts_with("SKILLRUNNER_");
}

std::vector<std::string> CleanEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (!Isolated(*e)) env.emplace_back(*e);
  }
  return env;
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

Ran Skillrunner(const std::filesystem::path& dir, const std::string& args) {
  std::string unset;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (Isolated(entry)) unset += " -u " + std::string(entry.substr(0, entry.find('=')));
  }
  std::filesystem::path out = dir / ".stdout", err = dir / ".stderr";
  std::string command = "cd " + Quote(dir.string()) + " && env" + unset + " " + Quote(SKILLRUNNER_BINARY) + " " +
                        args + " >" + Quote(out.string()) + " 2>" + Quote(err.string());
  int raw = std::system(command.c_str());
  Ran ran;
  ran.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  ran.out = ReadFile(out);
  ran.err = ReadFile(err);
  return ran;
}

pid_t Spawn(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> env = CleanEnvironment();
  pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: only async-signal-safe calls from here on would be ideal; the
  // test process is single-threaded at this point in practice.
  if (chdir(dir.c_str()) != 0) _exit(127);
  int null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, STDOUT_FILENO);
  dup2(null_fd, STDERR_FILENO);
  std::vector<char*> argv;
  std::string binary = SKILLRUNNER_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> copies = args;
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  execve(binary.c_str(), argv.data(), envp.data());
  _exit(127);
}

}  // namespace skillrunner::eval_test
