// The README's commands run as shown (DESIGN 9.8): its console examples give
// the output it prints ("..." stands for anything), and its socket example
// answers.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace fs = std::filesystem;

struct Example {
  std::string command;  // after "$ build/skillrunner "
  std::vector<std::string> output;
};

std::string Readme() {
  std::ifstream in(fs::path(SKILLRUNNER_SOURCE_DIR) / "README.md", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every "$ build/skillrunner ..." line of a console block, with the lines it
// shows as output, for the commands that need no provider key.
std::vector<Example> ConsoleExamples(const std::string& readme) {
  std::vector<Example> out;
  std::istringstream lines(readme);
  std::string line;
  bool in_console = false;
  bool in_example = false;  // output lines belong to the last "$ build/skillrunner" line
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      in_console = line == "```console";
      in_example = false;
      continue;
    }
    if (!in_console) continue;
    if (line.rfind("$ ", 0) == 0) {
      in_example = line.rfind("$ build/skillrunner ", 0) == 0;
      if (in_example) out.push_back({line.substr(20), {}});
    } else if (in_example) {
      out.back().output.push_back(line);
    }
  }
  return out;
}

// `shown` with "..." as a wildcard.
bool Matches(const std::string& actual, const std::string& shown) {
  std::string pattern;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (shown.compare(i, 3, "...") == 0) {
      pattern += ".*";
      i += 2;
    } else if (std::string("\\^$.|?*+()[]{}").find(shown[i]) != std::string::npos) {
      pattern += std::string("\\") + shown[i];
    } else {
      pattern += shown[i];
    }
  }
  return std::regex_match(actual, std::regex(pattern));
}

TEST(ReadmeTest, RunExamplesPrintWhatTheReadmeShows) {
  std::vector<Example> examples = ConsoleExamples(Readme());
  std::size_t checked = 0;
  for (const Example& example : examples) {
    if (example.command.rfind("run word_stats", 0) != 0) continue;  // the others need a key or a broken tree
    auto result = test_support::Skillrunner(SKILLRUNNER_SOURCE_DIR, example.command);
    ASSERT_EQ(example.output.size(), 1u) << example.command;
    std::string printed = result.out.substr(0, result.out.find('\n'));
    EXPECT_TRUE(Matches(printed, example.output[0])) << example.command << "\nprinted: " << printed
                                                     << "\nREADME:  " << example.output[0];
    ++checked;
  }
  EXPECT_EQ(checked, 2u);
}

TEST(ReadmeTest, TheSocketExampleAnswers) {
  std::string readme = Readme();
  std::size_t start = readme.find("build/skillrunner --provider simulated serve --socket /tmp/skillrunner.sock &");
  ASSERT_NE(start, std::string::npos);
  std::size_t end = readme.find("```", start);
  std::string block = readme.substr(start, end - start);
  testing::TempTree tree;
  std::string socket = (tree.root() / "s.sock").string();
  std::string script;
  for (std::size_t at = 0; (at = block.find("/tmp/skillrunner.sock", at)) != std::string::npos;) {
    block.replace(at, 21, socket);
  }
  std::string binary = SKILLRUNNER_BINARY;
  for (std::size_t at = 0; (at = block.find("build/skillrunner", at)) != std::string::npos; at += binary.size()) {
    block.replace(at, 17, binary);
  }
  // Wait for the socket before the first call, and check every call's status.
  block.replace(block.find("&\n") + 2, 0, "for i in $(seq 100); do [ -S " + socket + " ] && break; sleep 0.05; done\n");
  script = "set -e\ncd " + test_support::ShellQuote(SKILLRUNNER_SOURCE_DIR) + "\n" + block + "wait\necho done\n";
  tree.Write("example.sh", script);
  std::string command = "bash " + test_support::ShellQuote((tree.root() / "example.sh").string()) + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("\"status\":\"ok\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"skill\":\"triage_ticket\",\"output\":{"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("done\n")) << out;
}

}  // namespace
}  // namespace skillrunner
