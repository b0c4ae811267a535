// The docs are tested as a user would follow them: every fenced `sh` block of
// README.md and docs/ runs, in order, in a copy of the shipped tree (a `console`
// block right after one, without "$ " lines, is what it must print; "..." stands
// for anything); no relative link is dead; every flag of every `--help` and
// every key of the compiled-in schemas appears in docs/.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

const fs::path kSource = SKILLRUNNER_SOURCE_DIR;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// README.md, CONTRIBUTING.md, ARCHITECTURE.md and every .md under docs/, as
// paths relative to the source folder.
std::vector<fs::path> MarkdownFiles() {
  std::vector<fs::path> out = {"README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"};
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "docs")) {
    if (entry.path().extension() == ".md") out.push_back(fs::relative(entry.path(), kSource));
  }
  for (const char* client : {"clients/python/README.md", "clients/typescript/README.md"}) {
    if (fs::exists(kSource / client)) out.push_back(client);
  }
  return out;
}

struct Block {
  std::string tag;
  std::string text;
  int line = 0;
};

std::vector<Block> FencedBlocks(const std::string& markdown) {
  std::vector<Block> out;
  std::istringstream lines(markdown);
  std::string line;
  int number = 0;
  Block* open = nullptr;
  while (std::getline(lines, line)) {
    ++number;
    std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (trimmed.rfind("```", 0) == 0) {
      if (open != nullptr) {
        open = nullptr;
      } else {
        out.push_back({trimmed.substr(3), "", number});
        open = &out.back();
      }
      continue;
    }
    if (open != nullptr) open->text += line + "\n";
  }
  return out;
}

// `shown` with "..." as a wildcard, whole.
bool Matches(const std::string& actual, const std::string& shown) {
  std::string pattern;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (shown.compare(i, 3, "...") == 0) {
      pattern += "[\\s\\S]*";
      i += 2;
    } else if (std::string("\\^$.|?*+()[]{}").find(shown[i]) != std::string::npos) {
      pattern += std::string("\\") + shown[i];
    } else {
      pattern += shown[i];
    }
  }
  return std::regex_match(actual, std::regex(pattern));
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
}

// A copy of the shipped tree, with `build/skillrunner` the binary under test.
class ShippedTree {
 public:
  ShippedTree() {
    for (const char* part : {"skills", "rubrics", "evals", "skillrunner.yaml", "clients/python", "schemas"}) {
      fs::create_directories((tree_.root() / part).parent_path());
      fs::copy(kSource / part, tree_.root() / part, fs::copy_options::recursive);
    }
    fs::create_directories(tree_.root() / "build");
    fs::create_symlink(SKILLRUNNER_BINARY, tree_.root() / "build" / "skillrunner");
    // A clone, as the README's reader has: `validate` compares the skills with HEAD.
    const std::string git = "cd " + test_support::ShellQuote(tree_.root().string()) +
                            " && git init -q && git add skills rubrics evals skillrunner.yaml && git -c user.name=docs "
                            "-c user.email=docs@example.com commit -q -m shipped >/dev/null 2>&1";
    EXPECT_EQ(std::system(git.c_str()), 0) << git;
  }
  const fs::path& root() const { return tree_.root(); }

  // Runs one block with bash; its background jobs are stopped when it ends.
  test_support::CommandResult Run(std::string block, int index) {
    ReplaceAll(block, "/tmp/skillrunner.sock", (tree_.root() / "s.sock").string());
    const fs::path script = tree_.root() / ("block" + std::to_string(index) + ".sh");
    std::ofstream(script) << "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" << block;
    const std::string command =
        "cd " + test_support::ShellQuote(tree_.root().string()) +
        " && env -u SKILLRUNNER_PROVIDER -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u GEMINI_API_KEY"
        " -u OTEL_EXPORTER_OTLP_ENDPOINT XDG_CACHE_HOME=" +
        test_support::ShellQuote((tree_.root() / ".cache").string()) +
        " PATH=" + test_support::ShellQuote(fs::path(SKILLRUNNER_BINARY).parent_path().string()) + ":$PATH" +
        " timeout 120 bash " + test_support::ShellQuote(script.string()) + " 2>" +
        test_support::ShellQuote((tree_.root() / "stderr.txt").string());
    test_support::CommandResult result;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.out.append(buffer, n);
    const int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
  std::string Stderr() const { return ReadFile(tree_.root() / "stderr.txt"); }

 private:
  testing::TempTree tree_;
};

bool ShowsOnlyOutput(const Block& block) {
  if (block.tag != "console") return false;
  std::istringstream lines(block.text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("$ ", 0) == 0) return false;
  }
  return true;
}

TEST(DocsTest, EveryShBlockRunsAndPrintsWhatTheDocsShow) {
  std::size_t ran = 0;
  for (const fs::path& file : MarkdownFiles()) {
    const std::vector<Block> blocks = FencedBlocks(ReadFile(kSource / file));
    ShippedTree tree;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].tag != "sh") continue;
      auto result = tree.Run(blocks[i].text, static_cast<int>(i));
      ++ran;
      EXPECT_EQ(result.status, 0) << file.string() << ":" << blocks[i].line << "\n"
                                  << blocks[i].text << "\nstdout:\n"
                                  << result.out << "\nstderr:\n"
                                  << tree.Stderr();
      if (i + 1 < blocks.size() && ShowsOnlyOutput(blocks[i + 1])) {
        const std::string printed = result.out + tree.Stderr();
        EXPECT_TRUE(Matches(printed, blocks[i + 1].text)) << file.string() << ":" << blocks[i + 1].line << " shows\n"
                                                          << blocks[i + 1].text << "but it printed\n"
                                                          << printed;
      }
    }
  }
  EXPECT_GE(ran, 8u);  // README's walkthrough alone has six
}

// GitHub's heading anchors: lower case, punctuation other than - and _ gone,
// spaces to hyphens.
std::set<std::string> Anchors(const std::string& markdown) {
  std::set<std::string> out;
  bool fenced = false;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.rfind("#", 0) != 0) continue;
    std::string title = line.substr(line.find_first_not_of('#'));
    std::string anchor;
    for (char c : title.substr(title.find_first_not_of(' '))) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
        anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (c == ' ') {
        anchor += '-';
      }
    }
    out.insert(anchor);
  }
  return out;
}

TEST(DocsTest, NoRelativeLinkIsDead) {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  std::size_t checked = 0;
  for (const fs::path& file : MarkdownFiles()) {
    const std::string text = ReadFile(kSource / file);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
      const std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      const std::size_t hash = target.find('#');
      const std::string path = target.substr(0, hash);
      const fs::path resolved = path.empty() ? kSource / file : (kSource / file).parent_path() / path;
      ++checked;
      if (!fs::exists(resolved)) {
        ADD_FAILURE() << file.string() << ": dead link " << target;
        continue;
      }
      if (hash != std::string::npos && resolved.extension() == ".md") {
        EXPECT_TRUE(Anchors(ReadFile(resolved)).contains(target.substr(hash + 1)))
            << file.string() << ": no heading for " << target;
      }
    }
  }
  EXPECT_GE(checked, 50u);
}

std::string AllDocs() {
  std::string out;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "docs")) {
    if (entry.path().extension() == ".md") out += ReadFile(entry.path());
  }
  return out;
}

std::set<std::string> FlagsOf(const std::string& help) {
  std::set<std::string> out;
  const std::regex flag(R"((^|[\s,])(--[a-z][a-z0-9-]+))");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator(); ++it) {
    out.insert((*it)[2]);
  }
  return out;
}

TEST(DocsTest, EveryFlagOfEveryHelpIsInTheDocs) {
  const std::string docs = AllDocs();
  std::set<std::string> flags;
  for (const char* command : {"", "run", "validate", "list", "schema", "providers", "providers check", "serve", "call",
                              "probe", "codegen", "eval", "eval merge", "eval compare"}) {
    auto help = test_support::Skillrunner(kSource, std::string(command) + " --help");
    ASSERT_EQ(help.status, 0) << command;
    for (const std::string& flag : FlagsOf(help.out)) flags.insert(flag);
  }
  EXPECT_GE(flags.size(), 50u);
  for (const std::string& flag : flags) {
    EXPECT_NE(docs.find(flag), std::string::npos) << flag << " (in --help) appears nowhere in docs/";
  }
}

void CollectKeys(const json::value& schema, std::set<std::string>& keys) {
  if (schema.is_array()) {
    for (const auto& item : schema.as_array()) CollectKeys(item, keys);
    return;
  }
  if (!schema.is_object()) return;
  for (const auto& [name, value] : schema.as_object()) {
    if (name == "properties" && value.is_object()) {
      for (const auto& [key, sub] : value.as_object()) keys.insert(std::string(key));
    }
    CollectKeys(value, keys);
  }
}

// `key` as a word of its own: after a backtick, a dot or a bracket.
bool MentionsKey(const std::string& docs, const std::string& key) {
  for (std::size_t at = docs.find(key); at != std::string::npos; at = docs.find(key, at + 1)) {
    const char before = at == 0 ? ' ' : docs[at - 1];
    const char after = at + key.size() < docs.size() ? docs[at + key.size()] : ' ';
    const bool word_end = !std::isalnum(static_cast<unsigned char>(after)) && after != '_';
    if ((before == '`' || before == '.' || before == '[') && word_end) return true;
  }
  return false;
}

TEST(DocsTest, EveryKeyOfTheCompiledInSchemasIsInTheDocs) {
  const std::string docs = AllDocs();
  std::set<std::string> keys;
  for (const char* schema : {"skills/skill.schema.json", "rubrics/rubric.schema.json", "rubrics/verdict.schema.json",
                             "runner/tree/config.schema.json", "runner/eval/suite.schema.json"}) {
    CollectKeys(json::parse(ReadFile(kSource / schema)), keys);
  }
  EXPECT_GE(keys.size(), 100u);
  for (const std::string& key : keys) {
    EXPECT_TRUE(MentionsKey(docs, key)) << key << " (a schema key) appears nowhere in docs/";
  }
}

}  // namespace
}  // namespace skillrunner
