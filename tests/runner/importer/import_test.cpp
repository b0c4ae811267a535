// `skillrunner import`: the project's own promptfoo-shaped configs and OpenAI eval objects
// (tests/runner/importer/fixtures/) imported by the real program, the tree checked with
// `validate --strict` and run with `eval` on the simulated provider, as a team would.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <map>

#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::importer {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using eval_test::ReadFile;
using eval_test::ReadRecords;
using eval_test::Skillrunner;

const fs::path kFixtures = fs::path(SKILLRUNNER_SOURCE_DIR) / "tests/runner/importer/fixtures";

class ImportTest : public ::testing::Test {
 protected:
  // Copies a fixture folder into the temp tree as `src`.
  void CopyFixture(const std::string& name) {
    fs::copy(kFixtures / name, tree_.Path("src"), fs::copy_options::recursive);
  }
  fs::path Out() { return tree_.Path("out"); }
  std::map<std::string, json::object> CasesOf(const std::string& skill) {
    std::map<std::string, json::object> out;
    for (auto& c : ReadRecords(Out() / "skills" / skill / "cases.jsonl")) out[std::string(c.at("id").as_string())] = c;
    return out;
  }
  // validate --strict in the imported tree, then eval on the simulated provider: every case recorded.
  void ValidatesAndRuns(const std::string& suite, std::size_t cases) {
    auto validated = Skillrunner(Out(), "validate --strict");
    EXPECT_EQ(validated.status, 0) << validated.out << validated.err;
    auto ran = Skillrunner(Out(), "--provider simulated eval evals/" + suite + ".yaml --out runs/r1");
    EXPECT_TRUE(ran.status == 0 || ran.status == 1) << ran.err;  // 1: a threshold breached, as promptfoo fails
    EXPECT_EQ(ReadRecords(Out() / "runs/r1/results.jsonl").size(), cases) << ran.err;
  }

  testing::TempTree tree_;
};

TEST_F(ImportTest, APromptfooConfigOfTextPromptsCsvAndDefaultTestImportsValidatesAndRuns) {
  CopyFixture("translate");
  auto imported = Skillrunner(tree_.Path("src"), "import promptfoo promptfooconfig.yaml --out " + Out().string());
  ASSERT_EQ(imported.status, 0) << imported.err;
  EXPECT_NE(imported.err.find("import: wrote " + Out().string() + ": 2 skill(s), 10 case(s), 2 rubric(s); "),
            std::string::npos)
      << imported.err;
  // The file prompt, its placeholder in skillrunner's form and its Nunjucks removed.
  const std::string skill = ReadFile(Out() / "skills/translate/skill.yaml");
  EXPECT_NE(skill.find("Translate into French: {{input.text}}"), std::string::npos) << skill;
  EXPECT_EQ(skill.find("{%"), std::string::npos) << skill;
  // An inline prompt is named by its first words; its filter is dropped.
  EXPECT_NE(ReadFile(Out() / "skills/say_text_trim_in_french_briefly/skill.yaml").find("Say {{input.text}} in French"),
            std::string::npos);
  auto cases = CasesOf("translate");
  ASSERT_EQ(cases.size(), 5u);
  // defaultTest's not-icontains first, then the test's own; the rubric text went to the rubric.
  EXPECT_EQ(json::serialize(cases["hello"].at("checks")),
            R"([{"pointer":"/answer","op":"icontains","value":"as an ai","negate":true},)"
            R"({"pointer":"/answer","op":"icontains","value":"bonjour"},)"
            R"({"pointer":"/answer","op":"regex","value":"^[A-Z]"},)"
            R"({"pointer":"/answer","op":"contains","value":"Hello","negate":true}])");
  EXPECT_EQ(json::serialize(cases["thanks"].at("input")), R"({"text":"Thank you"})");  // a CSV row
  EXPECT_EQ(json::serialize(cases["thanks"].at("checks").at(1)),
            R"({"pointer":"/answer","op":"icontains","value":"merci"})");
  EXPECT_EQ(json::serialize(cases["plain_equals"].at("checks").at(1)),
            R"({"pointer":"/answer","op":"equals","value":"oui"})");
  EXPECT_EQ(json::serialize(cases["case_2"].at("checks").at(1)),
            R"({"pointer":"/answer","op":"contains_any","value":["nuit","soir"]})");
  const std::string rubric = ReadFile(Out() / "rubrics/translate_rubric.yaml");
  EXPECT_NE(rubric.find("The answer is in French."), std::string::npos) << rubric;
  EXPECT_NE(rubric.find("It sounds like a greeting at bedtime."), std::string::npos) << rubric;
  const std::string config = ReadFile(Out() / "skillrunner.yaml");
  EXPECT_NE(config.find("gpt-4o-mini:\n    provider: openai"), std::string::npos) << config;
  EXPECT_NE(config.find("claude-3-5-haiku-20241022:\n    provider: anthropic"), std::string::npos) << config;
  const std::string report = ReadFile(Out() / "import-report.md");
  EXPECT_NE(report.find("| assertion javascript | 2 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| template {% ... %} | 2 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| rubric assertion of one test | 2 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| another provider | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| template filter | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("- `tests[1].assert[3] (skill translate)`: assertion javascript"), std::string::npos) << report;
  ValidatesAndRuns("translate_to_french", 10);
}

TEST_F(ImportTest, APromptfooConfigWithAJsonSchemaAChatPromptAndLimitsImportsValidatesAndRuns) {
  CopyFixture("invoice");
  auto imported = Skillrunner(tree_.Path("src"), "import promptfoo promptfooconfig.yaml --out " + Out().string());
  ASSERT_EQ(imported.status, 0) << imported.err;
  const std::string skill = ReadFile(Out() / "skills/extract_invoice/skill.yaml");
  EXPECT_NE(skill.find("system: You extract invoices."), std::string::npos) << skill;
  EXPECT_NE(skill.find("user: \"Invoice: {{input.invoice}}\""), std::string::npos) << skill;
  EXPECT_NE(skill.find("enum:\n        - EUR\n        - USD"), std::string::npos) << skill;  // is-json's schema
  auto cases = CasesOf("extract_invoice");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(json::serialize(cases["euro_invoice"].at("checks")),
            R"([{"pointer":"/metrics/cost_usd","op":"lte","value":1E-2},)"
            R"({"pointer":"/metrics/duration_ms","op":"lte","value":5E3},)"
            R"({"pointer":"","op":"equals","value":{"total":1.25E1,"currency":"EUR"}}])");
  EXPECT_EQ(cases["euro_invoice"].at("reference"), "The total is 12.50 EUR.");  // factuality
  const std::string report = ReadFile(Out() / "import-report.md");
  EXPECT_NE(report.find("| assertion python | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| assertion similar | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| provider bedrock | 1 |"), std::string::npos) << report;
  ValidatesAndRuns("extract_invoice", 2);
}

TEST_F(ImportTest, AnOutFolderThatIsNotEmptyIsRefusedAndStrictFailsOnWhatWasLeft) {
  CopyFixture("translate");
  tree_.Write("out/keep.txt", "mine\n");
  auto refused = Skillrunner(tree_.Path("src"), "import promptfoo promptfooconfig.yaml --out " + Out().string());
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.err, "skillrunner import promptfoo: " + Out().string() +
                             " exists and is not empty: give another --out, or --force\n");
  auto strict =
      Skillrunner(tree_.Path("src"), "import promptfoo promptfooconfig.yaml --force --strict --out " + Out().string());
  EXPECT_EQ(strict.status, 1) << strict.err;
  EXPECT_EQ(ReadFile(Out() / "keep.txt"), "mine\n");
  EXPECT_TRUE(fs::exists(Out() / "import-report.md"));
  auto missing = Skillrunner(tree_.Path("src"), "import promptfoo nowhere.yaml --out other");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, "skillrunner import promptfoo: cannot read nowhere.yaml\n");
}

TEST_F(ImportTest, InputThatIsNotOfItsKindIsRefusedNamingTheFileAndPlace) {
  tree_.Write("src/empty.yaml", "description: no prompts here\n");
  tree_.Write("src/broken.yaml", "prompts: [\"a\"\ntests: {\n");
  tree_.Write("src/rows.yaml", "prompts: [\"Say {{x}}\"]\ntests: file://rows.csv\n");
  tree_.Write("src/rows.csv", "x,y,__expected\n1,2,contains: 1\n3\n");
  tree_.Write("src/eval.json", R"({"name": "no graders"})");
  tree_.Write("src/good.json", R"({"name": "e", "testing_criteria": []})");
  tree_.Write("src/items.jsonl", "{\"item\": {\"a\": 1}}\n{\"a\": 2}\n");
  auto refusal = [&](const std::string& args) {
    auto ran = Skillrunner(tree_.Path("src"), "import " + args + " --out " + Out().string());
    EXPECT_EQ(ran.status, 2) << args;
    EXPECT_FALSE(fs::exists(Out())) << args;
    return ran.err;
  };
  EXPECT_EQ(refusal("promptfoo empty.yaml"),
            "skillrunner import promptfoo: empty.yaml: not a promptfoo config (it has no prompts)\n");
  EXPECT_TRUE(refusal("promptfoo broken.yaml").starts_with("skillrunner import promptfoo: broken.yaml:2:"));
  EXPECT_EQ(refusal("promptfoo rows.yaml"),
            "skillrunner import promptfoo: rows.csv: row 3 has 1 values for 3 columns\n");
  EXPECT_EQ(refusal("openai-evals eval.json"),
            "skillrunner import openai-evals: eval.json: not an OpenAI eval object (no testing_criteria)\n");
  EXPECT_EQ(refusal("openai-evals good.json --data items.jsonl"),
            "skillrunner import openai-evals: items.jsonl:2: an item line is {\"item\": {...}}\n");
}

TEST_F(ImportTest, AnOpenAiEvalAsReturnedAndAsCreatedImportsTheSameValidatesAndRuns) {
  CopyFixture("openai");
  auto imported =
      Skillrunner(tree_.Path("src"), "import openai-evals eval.json --data items.jsonl --out " + Out().string());
  ASSERT_EQ(imported.status, 0) << imported.err;
  auto created = Skillrunner(tree_.Path("src"), "import openai-evals create_request.json --data items.jsonl --out " +
                                                    tree_.Path("created").string());
  ASSERT_EQ(created.status, 0) << created.err;
  for (const char* file :
       {"skills/push_notifications_summarizer/skill.yaml", "skills/push_notifications_summarizer/cases.jsonl",
        "rubrics/push_notifications_summarizer_graders.yaml"}) {
    // The same but for the header line, which names the file each came from.
    auto body = [](const std::string& text) { return text.starts_with("#") ? text.substr(text.find('\n')) : text; };
    EXPECT_EQ(body(ReadFile(Out() / file)), body(ReadFile(tree_.Path("created") / file))) << file;
  }
  auto cases = CasesOf("push_notifications_summarizer");
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(json::serialize(cases["item_2"].at("checks")),
            R"([{"pointer":"/answer","value":"payment received","op":"equals"},)"
            R"({"pointer":"/answer","value":"Sorry","op":"equals","negate":true},)"
            R"({"pointer":"/answer","value":"payment received","op":"icontains"},)"
            R"({"pointer":"/answer","value":"payment received","op":"fuzzy","threshold":8E-1}])");
  EXPECT_EQ(json::serialize(cases["item_2"].at("exec_check")),
            R"({"argv":["python3","graders/short.py"],"pass_threshold":5E-1})");
  const std::string grader = ReadFile(Out() / "skills/push_notifications_summarizer/graders/short.py");
  EXPECT_NE(grader.find("def grade(sample, item) -> float:"), std::string::npos) << grader;
  const std::string rubric = ReadFile(Out() / "rubrics/push_notifications_summarizer_graders.yaml");
  EXPECT_NE(rubric.find("Label it one of \"concise\", \"verbose\"; it passes when the label is one of \"concise\"."),
            std::string::npos)
      << rubric;
  EXPECT_NE(rubric.find("Rate the summary of the input's notifications."), std::string::npos) << rubric;
  const std::string report = ReadFile(Out() / "import-report.md");
  EXPECT_NE(report.find("| grader text_similarity | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| generation prompt | 1 |"), std::string::npos) << report;
  ValidatesAndRuns("push_notifications_summarizer", 3);
  // The grader ran: each record has its exec verdict.
  for (const auto& record : ReadRecords(Out() / "runs/r1/results.jsonl")) {
    ASSERT_TRUE(record.contains("checks")) << json::serialize(record);
    EXPECT_EQ(record.at("checks").as_array().back().at("op"), "exec") << json::serialize(record);
  }
}

}  // namespace
}  // namespace skillrunner::importer
