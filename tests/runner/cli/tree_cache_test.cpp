// `run`'s fast path (design.md §10.5): the index of a tree in the cache folder,
// used while every file keeps its (path, size, mtime) and dropped on any
// change; checked with the real program and its --log-level debug lines.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <chrono>
#include <fstream>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using test_support::ShellQuote;
using test_support::Skillrunner;

constexpr const char* kConfig = R"(providers:
  sim: { kind: simulated }
models:
  local-sim: { provider: sim, structured_output: none }
)";

constexpr const char* kRubric = R"(id: q
description: Is it sound?
criteria:
  - { id: sound, description: The answer is sound., required: true }
)";

std::string GenerationSkill(const std::string& id, const std::string& rest) {
  return "id: " + id + R"(
template_type: LLM_JSON_GENERATION
model: local-sim
prompt: { system: "Answer.", user: "{{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
)" + rest +
         "\n";
}

constexpr const char* kIntegerOutput =
    "output_schema: { type: object, required: [n], properties: { n: { type: integer } } }";
constexpr const char* kIndexUsed = "loaded skill \"a\" alone";
constexpr const char* kInput = " --seed 7 --input '{\"text\": \"hi\"}'";
// The warning of skill w, replayed from the index on every run.
constexpr const char* kWarning =
    "skills/w/skill.yaml:6:66: warning: output_schema at /properties/n/frobnicate: unknown keyword \"frobnicate\" "
    "[unknown-keyword]";

struct Output {
  int status = -1;
  std::string out;
  std::string err;
};

// The result without its timings (every member named *_ms).
json::value WithoutTimings(json::value value) {
  if (auto* o = value.if_object()) {
    json::object out;
    for (auto& [key, member] : *o) {
      if (!key.ends_with("_ms")) out[key] = WithoutTimings(member);
    }
    return out;
  }
  if (auto* a = value.if_array()) {
    json::array out;
    for (auto& item : *a) out.push_back(WithoutTimings(item));
    return out;
  }
  return value;
}

class TreeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skillrunner.yaml", kConfig);
    tree_.Write("rubrics/q.yaml", kRubric);
    tree_.Write("skills/a/skill.yaml", GenerationSkill("a", std::string(kIntegerOutput) + "\nreview: { rubric: q }"));
    tree_.Write("skills/b/skill.yaml", GenerationSkill("b", "output_schema: out.json"));
    tree_.Write("skills/b/out.json", R"({"type":"object","required":["s"],"properties":{"s":{"type":"string"}}})");
    tree_.Write("skills/g/skill.yaml", GenerationSkill("g", std::string(kIntegerOutput) + "\nreview: { skill: r }"));
    tree_.Write("skills/r/skill.yaml", "id: r\ntemplate_type: LLM_REVIEW\nrubric: q\nmodel: local-sim\n");
    tree_.Write(
        "skills/w/skill.yaml",
        GenerationSkill("w", "output_schema: { type: object, properties: { n: { type: integer, frobnicate: 2 } } }"));
    Age();
  }

  // Every file of the tree a minute old: a file written in the clock tick
  // `run` starts in is never trusted (it could change again unseen).
  void Age() {
    auto then = fs::file_time_type::clock::now() - std::chrono::minutes(1);
    for (const auto& entry : fs::recursive_directory_iterator(tree_.root())) fs::last_write_time(entry.path(), then);
  }

  Output Run(const std::string& args, const std::string& env = "") {
    fs::path err = tree_.Path("stderr.txt");
    auto result = Skillrunner(tree_.root(), args, "2>" + ShellQuote(err.string()),
                              "XDG_CACHE_HOME=" + ShellQuote(cache_.string()) + " " + env);
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    return {result.status, result.out, text.str()};
  }
  Output RunA(const std::string& more = "") { return Run("run a --log-level debug" + std::string(kInput) + more); }

  // Writes the index and checks that the next run uses it.
  void Prime() {
    auto first = RunA();
    ASSERT_EQ(first.status, 0) << first.err;
    ASSERT_NE(first.err.find("tree index: written to " + cache_.string() + "/skillrunner/tree-"), std::string::npos)
        << first.err;
    auto second = RunA();
    ASSERT_EQ(second.status, 0) << second.err;
    ASSERT_NE(second.err.find(kIndexUsed), std::string::npos) << second.err;
  }

  // After a change: the next run loads the whole tree, saying why.
  void ExpectFullLoad(const std::string& why, const Output& run) {
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.err.find(kIndexUsed), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("tree index: " + why + "; loading the whole tree"), std::string::npos) << run.err;
  }

  std::size_t IndexFiles() const {
    std::error_code ec;
    std::size_t n = 0;
    for (fs::directory_iterator it(cache_ / "skillrunner", ec), end; !ec && it != end; it.increment(ec)) ++n;
    return n;
  }

  testing::TempTree tree_;
  testing::TempTree cache_tree_;
  fs::path cache_ = cache_tree_.root();
};

TEST_F(TreeCacheTest, ASecondRunLoadsOnlyTheSkillFromTheIndex) {
  Prime();
  EXPECT_EQ(IndexFiles(), 1u);
}

TEST_F(TreeCacheTest, ResultsAndLogsAreTheSameWithAndWithoutTheIndex) {
  Prime();
  for (std::string id : {"a", "b", "g", "w"}) {
    SCOPED_TRACE(id);
    auto whole = Run("run " + id + " --no-tree-cache --log-level debug" + kInput);
    auto indexed = Run("run " + id + " --log-level debug" + kInput);
    ASSERT_EQ(whole.status, 0) << whole.err;
    ASSERT_EQ(indexed.status, 0) << indexed.err;
    EXPECT_NE(indexed.err.find("loaded skill \"" + id + "\" alone"), std::string::npos) << indexed.err;
    EXPECT_EQ(WithoutTimings(json::parse(indexed.out)), WithoutTimings(json::parse(whole.out)));
    // The tree's warnings are replayed, once, as the full load logs them.
    EXPECT_NE(whole.err.find(std::string(" debug ") + kWarning + "\n"), std::string::npos) << whole.err;
    auto at = indexed.err.find(std::string(" debug ") + kWarning + "\n");
    EXPECT_NE(at, std::string::npos) << indexed.err;
    EXPECT_EQ(indexed.err.find(kWarning, at + 8), std::string::npos) << indexed.err;
  }
}

TEST_F(TreeCacheTest, AnEditedSkillFileOfAnotherSkillIsLoadedAgainAndItsErrorShown) {
  Prime();
  tree_.Write("skills/b/skill.yaml", GenerationSkill("b", "output_schema: out.json\ntemprature: 0.5"));
  auto run = RunA();
  ExpectFullLoad("skills/b/skill.yaml changed", run);
  const std::string error =
      " warning skills/b/skill.yaml:7:1: /temprature: unexpected property \"temprature\" (did you mean "
      "\"temperature\"?)\n";
  EXPECT_NE(run.err.find(error), std::string::npos) << run.err;
  // A tree with errors gets no index: every run loads it whole and shows them.
  EXPECT_NE(run.err.find("tree index: not written"), std::string::npos) << run.err;
  auto again = Run("run a" + std::string(kInput));
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.err.find(error), std::string::npos) << again.err;
}

TEST_F(TreeCacheTest, ATouchedFileIsAChangeEvenWithTheSameContent) {
  Prime();
  fs::last_write_time(tree_.Path("skills/b/skill.yaml"), fs::file_time_type::clock::now());
  ExpectFullLoad("skills/b/skill.yaml changed", RunA());
}

TEST_F(TreeCacheTest, AnEditedSchemaFileIsAChange) {
  Prime();
  tree_.Write("skills/b/out.json", R"({"type":"object"})");
  ExpectFullLoad("skills/b/out.json changed", RunA());
}

TEST_F(TreeCacheTest, ANewSkillFolderIsAChange) {
  Prime();
  tree_.Write("skills/c/skill.yaml", GenerationSkill("c", kIntegerOutput));
  ExpectFullLoad("the number of files changed", RunA());
  EXPECT_EQ(Run("run c" + std::string(kInput)).status, 0);
}

TEST_F(TreeCacheTest, ARemovedSkillFolderIsAChangeAndItsWarningsGo) {
  Prime();
  fs::remove_all(tree_.Path("skills/w"));
  auto run = RunA();
  ExpectFullLoad("the number of files changed", run);
  EXPECT_EQ(run.err.find(kWarning), std::string::npos) << run.err;
  EXPECT_EQ(RunA().err.find(kWarning), std::string::npos);
}

TEST_F(TreeCacheTest, ANewRubricFileIsAChange) {
  Prime();
  tree_.Write("rubrics/z.yml", "id: z\ncriteria: []\n");
  auto run = RunA();
  ExpectFullLoad("the number of files changed", run);
  EXPECT_NE(run.err.find(" warning rubrics/z.yml:2:11: /criteria: expected at least 1 item, found 0\n"),
            std::string::npos)
      << run.err;
}

TEST_F(TreeCacheTest, AChangedConfigOrProviderOverrideIsAChange) {
  Prime();
  tree_.Write("skillrunner.yaml", std::string(kConfig) + "  other: { provider: sim }\n");
  ExpectFullLoad("the binary, the config or --provider changed", RunA());
  Age();
  ASSERT_NE(RunA().err.find("tree index: written"), std::string::npos);
  ExpectFullLoad("the binary, the config or --provider changed", RunA(" --provider sim"));
}

TEST_F(TreeCacheTest, AnotherBinaryNeverTrustsTheIndex) {
  Prime();
  // The same program at another path and with another mtime, as a rebuilt
  // or upgraded binary would be.
  fs::path copy = cache_ / "skillrunner-copy";
  std::error_code ec;
  fs::create_hard_link(SKILLRUNNER_BINARY, copy, ec);
  if (ec) fs::copy_file(SKILLRUNNER_BINARY, copy);
  std::string command = "cd " + ShellQuote(tree_.root().string()) +
                        " && XDG_CACHE_HOME=" + ShellQuote(cache_.string()) + " " + ShellQuote(copy.string()) +
                        " run a --log-level debug" + kInput + " 2>&1 >/dev/null";
  std::string err;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) err.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << err;
  EXPECT_EQ(err.find(kIndexUsed), std::string::npos) << err;
  EXPECT_NE(err.find("tree index: the binary, the config or --provider changed; loading the whole tree"),
            std::string::npos)
      << err;
}

// A skill the index does not know gets today's answer from a full load,
// with the ids it may have meant.
TEST_F(TreeCacheTest, AnUnknownSkillLoadsTheWholeTreeForItsHint) {
  Prime();
  auto run = Run("run aa --log-level debug" + std::string(kInput));
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("\"code\":\"SKILL_NOT_FOUND\",\"message\":\"unknown skill \\\"aa\\\" (did you mean"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.err.find("tree index: it does not know a skill \"aa\"; loading the whole tree"), std::string::npos)
      << run.err;
}

// A file whose mtime is not before the run began could still change within
// the same clock tick without a new stamp: such a tree is never indexed.
TEST_F(TreeCacheTest, AFileStampedAfterTheRunBeganIsNeverTrusted) {
  fs::last_write_time(tree_.Path("skills/b/skill.yaml"), fs::file_time_type::clock::now() + std::chrono::hours(1));
  for (int i = 0; i < 2; ++i) {
    auto run = RunA();
    EXPECT_EQ(run.status, 0);
    EXPECT_EQ(run.err.find(kIndexUsed), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("tree index: not written"), std::string::npos) << run.err;
  }
}

TEST_F(TreeCacheTest, TheIndexCanBeTurnedOff) {
  auto flag = RunA(" --no-tree-cache");
  auto env = Run("run a --log-level debug" + std::string(kInput), "SKILLRUNNER_NO_TREE_CACHE=1");
  EXPECT_EQ(flag.status, 0);
  EXPECT_EQ(env.status, 0);
  EXPECT_FALSE(fs::exists(cache_ / "skillrunner"));
  EXPECT_EQ(flag.err.find("tree index"), std::string::npos) << flag.err;
  EXPECT_EQ(env.err.find("tree index"), std::string::npos) << env.err;
}

TEST_F(TreeCacheTest, AnUnwritableCacheFolderFallsBackToAFullLoadQuietly) {
  tree_.Write("not-a-folder", "");
  auto quiet = Skillrunner(tree_.root(), "run a" + std::string(kInput), "2>&1",
                           "XDG_CACHE_HOME=" + ShellQuote(tree_.Path("not-a-folder").string()));
  EXPECT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.out.rfind(R"({"skill":"a","skill_version":1,"output":)", 0), 0u) << quiet.out;  // nothing on stderr
  auto debug = Skillrunner(tree_.root(), "run a --log-level debug" + std::string(kInput), "2>&1 >/dev/null",
                           "XDG_CACHE_HOME=" + ShellQuote(tree_.Path("not-a-folder").string()));
  EXPECT_EQ(debug.status, 0);
  EXPECT_NE(debug.out.find("tree index: cannot write " + tree_.Path("not-a-folder").string() + "/skillrunner/tree-"),
            std::string::npos)
      << debug.out;
}

// validate never reads the index: even a change that keeps a file's size and
// mtime (which `run` cannot see) is reported.
TEST_F(TreeCacheTest, ValidateReportsEveryProblemWhateverTheIndexSays) {
  Prime();
  fs::path b = tree_.Path("skills/b/skill.yaml");
  auto stamp = fs::last_write_time(b);
  std::string text = GenerationSkill("b", "output_schema: out.json");
  std::string broken = text;
  broken.replace(broken.find("template_type"), 13, "template_typo");
  tree_.Write("skills/b/skill.yaml", broken);
  fs::last_write_time(b, stamp);
  ASSERT_NE(RunA().err.find(kIndexUsed), std::string::npos);
  auto validate = Skillrunner(tree_.root(), "validate", "2>&1", "XDG_CACHE_HOME=" + ShellQuote(cache_.string()));
  EXPECT_EQ(validate.status, 2);
  EXPECT_NE(validate.out.find("skills/b/skill.yaml:2:1: "), std::string::npos) << validate.out;
  EXPECT_NE(validate.out.find(kWarning), std::string::npos) << validate.out;
  EXPECT_NE(validate.out.find("4 skill(s) and 1 rubric(s) loaded"), std::string::npos) << validate.out;
}

}  // namespace
}  // namespace skillrunner
