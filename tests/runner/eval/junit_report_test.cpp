#include "runner/eval/report/junit_report.h"

#include <gtest/gtest.h>

#include "tests/runner/eval/report_test_records.h"
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
            "testsuites nightly 5 1 2\n"
            " suite extract 3 1 1 3 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            "  case 'extract' 'c1' 0.300 []\n"
            "  case 'extract' 'c2' 0.300 [('failure', 'REVIEW_FAILED', 'phone number invented; "
            "criterion faithful failed: the phone is not in the text')]\n"
            "  case 'extract' 'c3' 0.260 [('error', 'MAX_RETRIES_EXCEEDED', 'output invalid after "
            "2 attempts')]\n"
            " suite idle 0 0 0 0 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            " suite summarise 2 0 1 2 [('run_id', '2025-01-02-ab12'), ('suite', 'nightly')]\n"
            "  case 'summarise' 's1#1' 0.300 []\n"
            "  case 'summarise' 's1#2' 0.300 [('error', 'JUDGE_ERROR', 'judge error: judge model "
            "answered 503 three times')]\n");
}

TEST(JunitReportTest, ProblemBodiesCarryTheDetails) {
  std::string xml = JunitXml(Summary(), {ErrorRecord("extract", "c3")});
  EXPECT_NE(xml.find("<testsuites name=\"nightly\" tests=\"1\" failures=\"0\" errors=\"1\" "
                     "skipped=\"0\" time=\"4.500\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(">output invalid after 2 attempts\n/email: does not match format email</error>"),
            std::string::npos)
      << xml;
}

TEST(JunitReportTest, ARefusalIsAFailureTypedByItsCode) {
  json::object record = ErrorRecord("extract", "c1");
  record["error"].as_object()["code"] = "REFUSED";
  record["error"].as_object()["message"] = "the model refused to answer: I can't help with that";
  std::string xml = JunitXml(Summary(), {record});
  EXPECT_NE(xml.find("<failure message=\"the model refused to answer: I can&#39;t help with that\" type=\"REFUSED\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("failures=\"1\" errors=\"0\""), std::string::npos) << xml;
}

TEST(JunitReportTest, ExpectedMismatchIsAFailureOfItsOwnType) {
  json::object record = PassRecord("extract", "c1");
  record["expected_match"] = false;
  record["expected_mismatches"] = json::parse(R"([{"path": "/name", "message": "expected \"Ada\", got \"Bob\""}])");
  std::string xml = JunitXml(Summary(), {record});
  EXPECT_NE(xml.find("<failure message=\"expected /name: expected &quot;Ada&quot;, got "
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
            "testsuites n<1> 1 0 1\n"
            " suite ex<tract> 1 0 1 1 [('run_id', 'r&1'), ('suite', 'n<1>')]\n"
            "  case 'ex<tract>' 'a<b&\"c\\'' 0.260 [('error', 'MAX_RETRIES_EXCEEDED', "
            "'bad\xEF\xBF\xBD byte ]]> & <end>\\nline two')]\n");
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
