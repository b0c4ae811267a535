// `validate --against REF` (design.md §11.7): each skill's schemas are compared with the same skill
// at a git commit, with the real program and a real git repository: a change that breaks callers
// with the same version is an error at the `version` key; raised, or compatible, it passes; a skill
// new since the ref has nothing to break; outside git or with `--against none` it is said once.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "tests/runner/cli/cli_config.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::ShellQuote;
using test_support::Skillrunner;

constexpr const char* kSkill = R"(id: s
version: 1
handler: echo
input_schema:
  type: object
  properties: { text: { type: string } }
output_schema:
  type: object
  required: [a, b]
  properties: { a: { type: string }, b: { type: integer } }
)";

class ValidateAgainstTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skillrunner.yaml", testing::kCliTestConfig);
    tree_.Write("skills/s/skill.yaml", kSkill);
  }
  // Runs git in the tree (a committer of its own: the machine may have none configured).
  void Git(const std::string& args) {
    const std::string command = "cd " + ShellQuote(tree_.root().string()) +
                                " && git -c user.name=test -c user.email=test@example.com -c init.defaultBranch=main " +
                                args + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << "git " << args;
  }
  void Commit(const std::string& message) {
    Git("add -A");
    Git("commit -q -m " + ShellQuote(message));
  }
  void Edit(const std::string& from, const std::string& to) {
    std::string text = testing::ReadFile(tree_.Path("skills/s/skill.yaml"));
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    tree_.Write("skills/s/skill.yaml", text.replace(at, from.size(), to));
  }
  testing::TempTree tree_;
};

TEST_F(ValidateAgainstTest, ARemovedOutputMemberAtTheSameVersionIsAnErrorAtTheVersionKey) {
  Git("init -q");
  Commit("v1");
  Edit("required: [a, b]\n  properties: { a: { type: string }, b: { type: integer } }",
       "required: [a]\n  properties: { a: { type: string } }");
  auto validate = Skillrunner(tree_.root(), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out,
            "skills/s/skill.yaml:2:10: /version: the schemas changed in a way that breaks callers, and version is "
            "still 1 (raise it): output /b: the member \"b\" was removed\n"
            "1 skill(s) and 0 rubric(s) loaded; 1 error(s), 0 warning(s)\n");
  auto as_json = Skillrunner(tree_.root(), "validate --json");
  const json::object out = json::parse(as_json.out).as_object();
  EXPECT_EQ(out.at("diagnostics").as_array().at(0).at("code"), "breaking-change");
  EXPECT_EQ(out.at("against").at("ref"), "HEAD");
  EXPECT_EQ(out.at("against").at("commit").as_string().size(), 40u);
  Edit("version: 1", "version: 2");
  auto raised = Skillrunner(tree_.root(), "validate", "2>&1");
  EXPECT_EQ(raised.status, 0);
  EXPECT_EQ(raised.out, "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 warning(s)\n");
}

TEST_F(ValidateAgainstTest, ACompatibleChangeOrANewSkillPassesAndAnOlderRefIsComparedToo) {
  Git("init -q");
  Commit("v1");
  Edit("properties: { text: { type: string } }", "properties: { text: { type: string }, lang: { type: string } }");
  tree_.Write("skills/t/skill.yaml",
              "id: t\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  auto compatible = Skillrunner(tree_.root(), "validate", "2>&1");
  EXPECT_EQ(compatible.status, 0);
  EXPECT_EQ(compatible.out, "2 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 warning(s)\n");
  Commit("lang");
  // b no longer required: against the first commit too (HEAD~1), though `lang` is new since it.
  Edit("required: [a, b]", "required: [a]");
  auto head = Skillrunner(tree_.root(), "validate --against HEAD~1", "2>&1");
  EXPECT_EQ(head.status, 2);
  EXPECT_NE(head.out.find("output /b: \"b\" is no longer always present\n"), std::string::npos) << head.out;
}

TEST_F(ValidateAgainstTest, OutsideGitOrWithNoneNothingIsComparedAndItIsSaidOnce) {
  Edit("required: [a, b]", "required: [a]");
  auto outside = Skillrunner(tree_.root(), "validate", "2>&1");
  EXPECT_EQ(outside.status, 0);
  EXPECT_EQ(outside.out,
            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 warning(s) (schemas not compared: skills is not in a "
            "git work tree)\n");
  Git("init -q");
  auto unborn = Skillrunner(tree_.root(), "validate", "2>&1");
  EXPECT_EQ(unborn.out,
            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 warning(s) (schemas not compared: the repository has "
            "no commit yet)\n");
  Commit("v1");
  Edit("required: [a]", "required: []");
  auto none = Skillrunner(tree_.root(), "validate --against none --json");
  EXPECT_EQ(none.status, 0);
  const json::object out = json::parse(none.out).as_object();
  EXPECT_TRUE(out.at("against").is_null());
  EXPECT_EQ(out.at("not_compared"), "--against none");
  auto no_git = Skillrunner(tree_.root(), "validate", "2>&1", "PATH=/nonexistent");
  EXPECT_EQ(no_git.status, 0);
  EXPECT_EQ(no_git.out,
            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 warning(s) (schemas not compared: git is not "
            "installed)\n");
  auto bad_ref = Skillrunner(tree_.root(), "validate --against no-such-ref", "2>&1");
  EXPECT_EQ(bad_ref.status, 2);
  EXPECT_EQ(bad_ref.out, "skillrunner validate: --against no-such-ref: no such commit in " +
                             std::filesystem::canonical(tree_.root()).string() + "\n");
}

}  // namespace
}  // namespace skillrunner
