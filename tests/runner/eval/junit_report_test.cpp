#include "runner/eval/report/junit_report.h"

#include <gtest/gtest.h>

#include "tests/runner/eval/report_test_records.h"
#include "tests/runner/eval/summary_json.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using namespace report_records;

// Prints what a JUnit consumer sees: per suite its counts and properties,
// per test case its name, time and problem element.

json::object Summary() {
  return ParseObject(R"({"run_id": "2025-01-02-ab12", "suite": "nightly", "duration_ms": 4500,
                         "skills": {"extract": {}, "summarise": {}, "idle": {}}})");
}

TEST(JunitReportTest, ParsesWithOneSuitePerSkillAndJudgeErrorsAsErrors) {
  TempTree tree;
  std::vector<json::object> records{
      FailRecord("extract", "c2"),      PassRecord("extract", "c1"),
      ErrorRecord("extract", "c3"),     JudgeErrorRecord("summarise", "s1", 2),
      PassRecord("summarise", "s1", 1),
  };
  auto file = tree.Write("junit.xml", JunitXml(Summary(), records));

  EXPECT_EQ(testing::RunPython(tree, testing::kJunitDescribeScript, file),
            "testsuites nightly 5 2 1\n"
            " suite extract 3 2 0 3 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            "  case 'extract' 'c1' 0.300 []\n"
            "  case 'extract' 'c2' 0.300 [('failure', 'REVIEW_FAILED', 'REVIEW_FAILED: phone number invented; "
            "criterion faithful failed: the phone is not in the text')]\n"
            "  case 'extract' 'c3' 0.260 [('failure', 'SCHEMA_INVALID', 'SCHEMA_INVALID: output invalid after "
            "2 attempts; /email: does not match format email')]\n"
            " suite idle 0 0 0 0 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            " suite summarise 2 0 1 2 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            "  case 'summarise' 's1#1' 0.300 []\n"
            "  case 'summarise' 's1#2' 0.300 [('error', 'JUDGE_ERROR', 'judge error: judge model "
            "answered 503 three times')]\n");
}

TEST(JunitReportTest, ProblemBodiesCarryTheDetails) {
  std::string xml = JunitXml(Summary(), {ErrorRecord("extract", "c3")});
  EXPECT_NE(xml.find("<testsuites name=\"nightly\" tests=\"1\" failures=\"1\" errors=\"0\" "
                     "skipped=\"0\" time=\"4.500\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(">SCHEMA_INVALID:\n  output invalid after 2 attempts\n  /email: does not match format "
                     "email</failure>"),
            std::string::npos)
      << xml;
  // A provider's failure is an error, not a failed gate.
  json::object unavailable = ErrorRecord("extract", "c4");
  unavailable["error"] = ParseObject(R"({"code": "PROVIDER_UNAVAILABLE", "message": "503 three times"})");
  xml = JunitXml(Summary(), {unavailable});
  EXPECT_NE(xml.find("<error message=\"503 three times\" type=\"PROVIDER_UNAVAILABLE\">503 three times</error>"),
            std::string::npos)
      << xml;
}

// design.md §12.3: one failure per case, typed by its first failed gate in the fixed order, its
// message listing every failed gate with its own message (a fuzzy check's reason included).
TEST(JunitReportTest, ACaseFailingThreeGatesIsOneFailureNamingEachGate) {
  json::object record = FailRecord("extract", "item_14");
  record["expected_match"] = false;
  record["expected_mismatches"] = json::parse(R"([{"path": "/name", "message": "expected \"Ada\", got \"Bob\""}])");
  record["check_pass"] = false;
  record["checks"] = json::parse(R"([
    {"pointer": "/name", "op": "equals", "pass": true, "expected": "Bob", "actual": "Bob"},
    {"pointer": "/summary", "op": "fuzzy", "pass": false, "expected": "a short summary", "actual": "long",
     "score": 0.478, "message": "is 0.478 similar to \"a short summary\", under 0.60"}])");
  TempTree tree;
  auto file = tree.Write("junit.xml", JunitXml(Summary(), {record}));
  EXPECT_EQ(testing::RunPython(tree, testing::kJunitDescribeScript, file),
            "testsuites nightly 1 1 0\n"
            " suite extract 1 1 0 1 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            "  case 'extract' 'item_14' 0.300 [('failure', 'EXPECTED_MISMATCH', 'EXPECTED_MISMATCH: expected /name: "
            "expected \"Ada\", got \"Bob\" | CHECK_FAILED: check fuzzy /summary: is 0.478 similar to \"a short "
            "summary\", under 0.60 | REVIEW_FAILED: phone number invented; criterion faithful failed: the phone is "
            "not in the text')]\n"
            " suite idle 0 0 0 0 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            " suite summarise 0 0 0 0 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n");

  // A check alone: CHECK_FAILED, never EXPECTED_MISMATCH for a suite without `expected:`.
  json::object check_only = PassRecord("extract", "c9");
  check_only["check_pass"] = false;
  check_only["checks"] = record["checks"];
  const std::string xml = JunitXml(Summary(), {check_only});
  EXPECT_NE(xml.find("<failure message=\"CHECK_FAILED: check fuzzy /summary: is 0.478 similar to &quot;a short "
                     "summary&quot;, under 0.60\" type=\"CHECK_FAILED\">"),
            std::string::npos)
      << xml;
}

TEST(JunitReportTest, ARefusalIsAFailureTypedByItsCode) {
  json::object record = ErrorRecord("extract", "c1");
  record["error"].as_object()["code"] = "REFUSED";
  record["error"].as_object()["message"] = "the model refused to answer: I can't help with that";
  std::string xml = JunitXml(Summary(), {record});
  EXPECT_NE(xml.find("<failure message=\"REFUSED: the model refused to answer: I can&#39;t help with that\" "
                     "type=\"REFUSED\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("failures=\"1\" errors=\"0\""), std::string::npos) << xml;
}

TEST(JunitReportTest, ExpectedMismatchIsAFailureOfItsOwnType) {
  json::object record = PassRecord("extract", "c1");
  record["expected_match"] = false;
  record["expected_mismatches"] = json::parse(R"([{"path": "/name", "message": "expected \"Ada\", got \"Bob\""}])");
  std::string xml = JunitXml(Summary(), {record});
  EXPECT_NE(xml.find("<failure message=\"EXPECTED_MISMATCH: expected /name: expected &quot;Ada&quot;, got "
                     "&quot;Bob&quot;\" type=\"EXPECTED_MISMATCH\">"),
            std::string::npos)
      << xml;
}

TEST(JunitReportTest, EscapesMarkupAndReplacesControlCharacters) {
  TempTree tree;
  json::object record = ErrorRecord("ex<tract>", "a<b&\"c'");
  record["error"].as_object()["message"] = "bad\x01 byte ]]> & <end>\nline two";
  json::object summary = ParseObject(R"({"run_id": "r&1", "suite": "n<1>"})");
  auto file = tree.Write("junit.xml", JunitXml(summary, {record}));

  EXPECT_EQ(testing::RunPython(tree, testing::kJunitDescribeScript, file),
            "testsuites n<1> 1 1 0\n"
            " suite ex<tract> 1 1 0 1 [('run_id', 'r&1'), ('suite', 'n<1>')]\n"
            "  case 'ex<tract>' 'a<b&\"c\\'' 0.260 [('failure', 'SCHEMA_INVALID', "
            "'SCHEMA_INVALID: bad\xEF\xBF\xBD byte ]]> & <end>\\nline two; /email: does not match format "
            "email')]\n");
  std::string xml = JunitXml(summary, {record});
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_NE(xml.find("name=\"a&lt;b&amp;&quot;c&#39;\""), std::string::npos) << xml;
}

TEST(JunitReportTest, OddRecordsStillGiveValidJunit) {
  TempTree tree;
  std::vector<json::object> records{json::object(), ParseObject(R"({"skill": 5, "case": null, "error": "x"})"),
                                    ParseObject(R"({"skill": "s", "case": "c", "result": {},
                                                    "review": {"pass": "maybe"}})")};
  auto file = tree.Write("junit.xml", JunitXml(ParseObject(R"({"skills": [1]})"), records));
  EXPECT_EQ(testing::RunPython(tree, testing::kJunitDescribeScript, file),
            "testsuites  3 0 3\n"
            " suite  2 0 2 2 [('run_id', ''), ('suite', '')]\n"
            "  case '' '' 0.000 [('error', 'ERROR', 'ERROR')]\n"
            "  case '' '' 0.000 [('error', 'ERROR', 'ERROR')]\n"
            " suite s 1 0 1 1 [('run_id', ''), ('suite', '')]\n"
            "  case 's' 'c' 0.000 [('error', 'JUDGE_ERROR', 'judge error')]\n");
}

}  // namespace
}  // namespace skillrunner::eval
