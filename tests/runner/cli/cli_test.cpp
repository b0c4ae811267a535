// Runs the real `skillrunner` program as a user would and checks what it
// prints and its exit status.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>

#include "tests/runner/server/serve_process.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;

using test_support::CommandResult;
using test_support::Skillrunner;
std::string Quote(std::string_view s) { return test_support::ShellQuote(s); }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skills/good/skill.yaml",
                "id: good\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    tree_.Write("skills/upper/skill.yaml", R"(id: upper
handler: exec
command: [python3, ./upper.py]
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [text], properties: { text: { type: string } } }
)");
    tree_.Write("skills/upper/upper.py",
                "import json, sys\nprint(json.dumps({'text': json.load(sys.stdin)['text'].upper()}))\n");
    tree_.Write("skills/failing/skill.yaml", R"(id: failing
handler: exec
command: [sh, -c, "echo 'disk on fire' >&2; exit 3"]
input_schema: {}
output_schema: {}
)");
  }
  void WriteBrokenSkills() {
    tree_.Write("skills/broken_yaml/skill.yaml", "id: broken_yaml\nhandler: echo\ninput_schema: { type: object\n");
    tree_.Write("skills/magic/skill.yaml", "id: magic\nmodel: gpt-4o-mini\ntemplate_type: LLM_MAGIC\n");
    tree_.Write("skills/bad_schema/skill.yaml",
                "id: bad_schema\nhandler: echo\ninput_schema: {}\noutput_schema:\n  type: objekt\n");
  }

  testing::TempTree tree_;
};

TEST_F(CliTest, ValidateReportsEveryBrokenFileAndExitsTwo) {
  WriteBrokenSkills();
  auto result = Skillrunner(tree_.root(), "validate");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out,
            "skills/bad_schema/skill.yaml:5:9: output_schema at /type is not a valid JSON Schema: "
            "unknown type \"objekt\" (expected array, boolean, integer, null, number, object or string)\n"
            "skills/broken_yaml/skill.yaml:4:1: YAML syntax error: end of map flow not found\n"
            "skills/magic/skill.yaml:3:16: /template_type: expected one of "
            "[\"LLM_JSON_GENERATION\",\"LLM_REVIEW\"], found \"LLM_MAGIC\"\n"
            "3 skill(s) and 0 rubric(s) loaded; 3 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
  // The good skills still load and run.
  EXPECT_EQ(Skillrunner(tree_.root(), "list --json").out.find("\"id\":\"upper\"") != std::string::npos, true);
}

TEST_F(CliTest, ValidateOnAGoodTreeExitsZero) {
  auto result = Skillrunner(tree_.root(), "validate");
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out,
            "3 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
}

// An empty skillrunner.yaml, or one of comments only, is the same as none (design.md §12.0): validate,
// run and serve load it as the built-in defaults, saying so once.
TEST_F(CliTest, AnEmptyOrCommentOnlyConfigIsTheBuiltInDefaultsWithAWarning) {
  for (const std::string content : {"", "# the settings come later\n# history: nightly.db\n"}) {
    SCOPED_TRACE("skillrunner.yaml: \"" + content + "\"");
    tree_.Write("skillrunner.yaml", content);
    auto validate = Skillrunner(tree_.root(), "validate");
    EXPECT_EQ(validate.status, 0);
    EXPECT_EQ(validate.out,
              "skillrunner.yaml: warning: the config holds no settings (empty or only comments): the built-in "
              "defaults apply, as with no file (only the simulated provider) [config-empty]\n"
              "3 skill(s) and 0 rubric(s) loaded; 0 error(s), 1 warning(s) (schemas not compared: skills is not in a "
              "git work tree)\n");
    auto run = Skillrunner(tree_.root(), "run upper --input '{\"text\":\"hi\"}'");
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_EQ(json::serialize(json::parse(run.out).at("output")), R"({"text":"HI"})");
    const std::string socket = tree_.Path("serve.sock").string();
    testing::ServeProcess serve(tree_, {"--socket", socket});
    auto client = testing::ConnectWhenReady(socket);
    ASSERT_TRUE(client) << serve.Stderr();
    json::value answer = client->Call(
        R"({"jsonrpc":"2.0","id":1,"method":"skills.invoke","params":{"skill":"upper","input":{"text":"hi"}}})"
        "\n");
    EXPECT_EQ(answer.at_pointer("/result/output/text"), "HI") << json::serialize(answer);
    serve.Signal(SIGTERM);
    EXPECT_EQ(serve.Wait(std::chrono::seconds(20)), 0) << serve.Stderr();
    EXPECT_NE(serve.Stderr().find("the config holds no settings"), std::string::npos) << serve.Stderr();
  }
}

// max_concurrent is a pool of places for a skill's processes: a skill that starts none is told so.
TEST_F(CliTest, MaxConcurrentOnASkillThatStartsNoProcessIsAnErrorAtItsKey) {
  tree_.Write(
      "skills/good/skill.yaml",
      "id: good\nhandler: echo\nmax_concurrent: 4\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
  auto result = Skillrunner(tree_.root(), "validate");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out.substr(0, result.out.find('\n')),
            "skills/good/skill.yaml:3:17: /max_concurrent: handler skills other than exec take no \"max_concurrent\" "
            "(they start no process)");
}

TEST_F(CliTest, ExecHandlerSkillRunsEndToEnd) {
  auto result = Skillrunner(tree_.root(), "run upper --input '{\"text\":\"hello\"}'");
  ASSERT_EQ(result.status, 0) << result.out;
  json::value answer = json::parse(result.out);
  EXPECT_EQ(answer.at("skill"), "upper");
  EXPECT_EQ(json::serialize(answer.at("output")), R"({"text":"HELLO"})");
  EXPECT_EQ(answer.at("metrics").at("mode"), "handler");
  EXPECT_EQ(answer.at("metrics").at("attempts"), 1);
  EXPECT_EQ(answer.at("attempts").at(0).at("kind"), "ok");
}

TEST_F(CliTest, ShippedWordStatsSkillRuns) {
  std::string args = std::string("run word_stats --skills ") + SKILLRUNNER_SOURCE_DIR +
                     "/skills --input '{\"text\":\"the cat and the hat\",\"top\":1}'";
  auto result = Skillrunner(tree_.root(), args);
  ASSERT_EQ(result.status, 0) << result.out;
  EXPECT_EQ(json::serialize(json::parse(result.out).at("output")),
            R"({"words":5,"lines":1,"characters":19,"top_words":[{"word":"the","count":2}]})");
}

// The shipped validators example, as scripts/demo.sh runs it: the simulated
// model's first answer breaks the Python rule, the fresh retry (no assistant
// turn) repairs what the rule named.
TEST_F(CliTest, ShippedRouteIncidentSkillRetriesWhatItsPythonRuleRejects) {
  auto result = Skillrunner(SKILLRUNNER_SOURCE_DIR,
                            "--provider simulated run route_incident --show-request --input "
                            "'{\"report\": \"All API calls return 503.\", \"service\": \"payments\"}'");
  ASSERT_EQ(result.status, 0) << result.out;
  json::value answer = json::parse(result.out);
  const json::array& attempts = answer.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].at("kind"), "rule");
  EXPECT_EQ(json::serialize(attempts[0].at("errors")),
            R"([{"path":"/page_oncall","message":"a sev1 incident must page on-call"}])");
  EXPECT_EQ(json::parse(std::string(attempts[0].at("raw").as_string())).at("page_oncall"), false);
  EXPECT_EQ(attempts[1].at("kind"), "ok");
  const json::array& retry = attempts[1].at("request").at("messages").as_array();
  ASSERT_EQ(retry.size(), 3u);
  EXPECT_EQ(retry[1], attempts[0].at("request").at("messages").at(1));
  EXPECT_EQ(retry[2].at("role"), "user");
  EXPECT_NE(std::string(retry[2].at("content").as_string()).find("- /page_oncall: a sev1 incident must page on-call"),
            std::string::npos);
  EXPECT_EQ(answer.at("output").at("severity"), "sev1");
  EXPECT_EQ(answer.at("output").at("page_oncall"), true);
}

TEST_F(CliTest, BadInputIsInputInvalidWithPointersAsJson) {
  auto result = Skillrunner(tree_.root(), "run upper --input '{\"text\": 7}'");
  EXPECT_EQ(result.status, 2);
  json::value answer = json::parse(result.out);
  EXPECT_EQ(answer.at("error").at("code"), "INPUT_INVALID");
  EXPECT_EQ(json::serialize(answer.at("error").at("errors")),
            R"([{"path":"/text","message":"expected string, found number 7"}])");
  EXPECT_EQ(answer.at("error").at("attempts").as_array().size(), 0u);
}

TEST_F(CliTest, InputThatIsNotJsonIsInputInvalid) {
  auto result = Skillrunner(tree_.root(), "run upper --input '{\"text\": '");
  EXPECT_EQ(result.status, 2);
  json::value answer = json::parse(result.out);
  EXPECT_EQ(answer.at("error").at("code"), "INPUT_INVALID");
  EXPECT_EQ(answer.at("error").at("message"), "--input is not valid JSON: line 1, column 10: incomplete JSON");
  auto two_lines = Skillrunner(tree_.root(), "run upper --input '{\"text\": \"a\",\n  \"top\": }'");
  EXPECT_EQ(json::parse(two_lines.out).at("error").at("message"),
            "--input is not valid JSON: line 2, column 10: syntax error");
  // Latin-1 bytes where UTF-8 is due: said as such, not as a syntax error.
  auto latin1 = Skillrunner(tree_.root(), R"X(run upper --input "$(printf '{"text": "caf\351"}')")X");
  EXPECT_EQ(json::parse(latin1.out).at("error").at("message"),
            "--input is not valid JSON: line 1, column 14: invalid UTF-8 at byte 14");
}

TEST_F(CliTest, UnknownSkillIsSkillNotFoundAsJson) {
  auto result = Skillrunner(tree_.root(), "run uper --input '{}'");
  EXPECT_EQ(result.status, 2);
  json::value answer = json::parse(result.out);
  EXPECT_EQ(answer.at("error").at("code"), "SKILL_NOT_FOUND");
  EXPECT_EQ(answer.at("error").at("message"), "unknown skill \"uper\" (did you mean \"upper\"?)");
}

TEST_F(CliTest, HandlerFailureExitsThreeWithStderrTail) {
  auto result = Skillrunner(tree_.root(), "run failing --input '{}'");
  EXPECT_EQ(result.status, 3);
  json::value answer = json::parse(result.out);
  EXPECT_EQ(answer.at("error").at("code"), "HANDLER_FAILED");
  EXPECT_EQ(answer.at("error").at("message"), "handler exited with status 3");
  EXPECT_EQ(answer.at("error").at("details").at("exit_status"), 3);
  EXPECT_EQ(answer.at("error").at("details").at("stderr_tail"), "disk on fire\n");
}

TEST_F(CliTest, CommonOptionsWorkBeforeAndAfterTheSubcommand) {
  std::filesystem::path elsewhere = tree_.Path("elsewhere");
  std::filesystem::create_directories(elsewhere);
  std::string skills = Quote(tree_.Path("skills").string());
  EXPECT_EQ(Skillrunner(elsewhere, "--skills " + skills + " run good --input '{\"a\":1}'").status, 0);
  auto after = Skillrunner(elsewhere, "run good --input '{\"a\":1}' --skills " + skills + " --pretty");
  EXPECT_EQ(after.status, 0);
  EXPECT_EQ(after.out.substr(0, 22), "{\n  \"skill\": \"good\",\n ");
}

TEST_F(CliTest, UsageErrorsExitTwoAndVersionPrints) {
  EXPECT_EQ(Skillrunner(tree_.root(), "run").status, 2);
  EXPECT_EQ(Skillrunner(tree_.root(), "frobnicate").status, 2);
  EXPECT_EQ(Skillrunner(tree_.root(), "run good").status, 2);
  auto version = Skillrunner(tree_.root(), "--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.starts_with("skillrunner "), true);
}

TEST_F(CliTest, AGatedOutputWhoseFinalReviewFailsExitsFive) {
  tree_.Write("rubrics/short.yaml",
              "id: short\ncriteria:\n  - { id: brief, description: Short enough., required: true }\n");
  tree_.Write("skills/gated/skill.yaml", R"(id: gated
template_type: LLM_JSON_GENERATION
model: any-model
prompt: { user: "Say {{input.text}}" }
input_schema: { type: object, properties: { text: { type: string } } }
output_schema: { type: object, required: [text], properties: { text: { type: string } } }
review: { rubric: short, retry_once: true }
)");
  // Both judges (attempts 2 and 4 of the invocation) fail the criterion.
  tree_.Write("skillrunner.yaml", R"(providers:
  sim:
    kind: simulated
    faults:
      - { skill: gated.review, attempt: [2, 4], fault: verdict, criterion: brief, verdict: fail }
default_provider: sim
)");
  auto result = Skillrunner(tree_.root(), "run gated --input '{\"text\":\"hi\"}'");
  EXPECT_EQ(result.status, 5) << result.out;
  json::value answer = json::parse(result.out);
  EXPECT_EQ(answer.at("review").at("pass"), false);
  EXPECT_EQ(answer.at("review").at("first").at("pass"), false);
  EXPECT_EQ(answer.at("metrics").at("attempts"), 4);
}

TEST_F(CliTest, ProvidersCheckSendsOneRequestPerProvider) {
  auto ok = Skillrunner(tree_.root(), "providers check simulated --json");
  EXPECT_EQ(ok.status, 0);
  json::value line = json::parse(ok.out);
  EXPECT_EQ(line.at("provider"), "simulated");
  EXPECT_EQ(line.at("ok"), true);
  EXPECT_EQ(line.at("tokens_estimated"), true);
  auto unknown = Skillrunner(tree_.root(), "providers check nope", "2>&1");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.out, "skillrunner: the config (built-in) defines no provider \"nope\"\n");
  auto typo = Skillrunner(tree_.root(), "providers check simulatd", "2>&1");
  EXPECT_EQ(typo.status, 2);
  EXPECT_EQ(typo.out,
            "skillrunner: the config (built-in) defines no provider \"simulatd\" (did you mean \"simulated\"?)\n");
}

TEST_F(CliTest, JsonLogsAreOneObjectPerLine) {
  WriteBrokenSkills();
  auto result = Skillrunner(tree_.root(), "list --log-format json --log-level warn", "2>&1 >/dev/null");
  // stderr (the log) went to the pipe; every line parses as a JSON object.
  std::size_t lines = 0;
  for (std::size_t start = 0, end; (end = result.out.find('\n', start)) != std::string::npos; start = end + 1) {
    json::value line = json::parse(result.out.substr(start, end - start));
    EXPECT_EQ(line.at("level"), "warning");
    ++lines;
  }
  EXPECT_EQ(lines, 3u);
}

}  // namespace
}  // namespace skillrunner
