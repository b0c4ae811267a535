// How an eval run stays honest when things go wrong: a review gate that cannot
// judge, judge errors and indeterminate verdicts kept out of pass rates,
// UTF-8 in results.jsonl, failed writes, duplicate records, progress lines
// while nothing finishes, exact numbers, and the
// regression gate over stable criteria only.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "runner/eval/expected_match.h"
#include "runner/eval/progress.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/records/results_log.h"
#include "runner/eval/regression.h"
#include "runner/eval/report/html_report.h"
#include "runner/eval/report/junit_report.h"
#include "runner/eval/summary.h"
#include "runner/eval/thresholds.h"
#include "services/common/utf8.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/runner/eval/summary_json.h"
#include "tests/runner/eval/thresholds_fixture.h"
#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using testing::ParseObject;
using testing::PassRecord;
using testing::TempTree;

std::string ReadAll(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What SkillRunner::Invoke records when the skill's own review gate could not
// judge the (valid) output: an "error" with code JUDGE_ERROR.
json::object GateJudgeErrorRecord(std::string_view skill, std::string_view case_id) {
  json::object record = ParseObject(R"({"error": {"code": "JUDGE_ERROR",
    "message": "the judge of rubric \"q\" (model \"m\") gave no usable verdict",
    "errors": [], "attempts": [{"n": 1, "kind": "ok"}, {"n": 2, "kind": "parse"}, {"n": 3, "kind": "parse"}],
    "metrics": {"attempts": 3, "validation_retries": 1, "transient_retries": 0, "input_tokens": 90,
                "output_tokens": 12, "duration_ms": 40}}, "duration_ms": 41})");
  record["skill"] = skill;
  record["case"] = case_id;
  return record;
}

std::string Verdict(bool pass, std::string_view a, std::string_view b) {
  return std::string(R"({"pass":)") + (pass ? "true" : "false") +
         R"(,"criteria_results":[{"criterion_id":"a","verdict":")" + std::string(a) +
         R"("},{"criterion_id":"b","verdict":")" + std::string(b) + R"("}]})";
}

json::object Judged(std::string_view id, bool pass, std::string_view a, std::string_view b) {
  return ParseObject(
      R"({"skill":"s","case":")" + std::string(id) +
      R"(","result":{"output":{},"metrics":{"attempts":1,"input_tokens":1,"output_tokens":1,"duration_ms":1}},"review":)" +
      Verdict(pass, a, b) + "}");
}

json::object EvalJudgeError(std::string_view id) {
  return ParseObject(
      R"({"skill":"s","case":")" + std::string(id) +
      R"(","result":{"output":{},"metrics":{"attempts":1}},"judge_error":{"code":"JUDGE_ERROR","message":"no verdict"}})");
}

SummaryHeader Header() {
  SummaryHeader header;
  header.run_id = "r";
  header.suite = "nightly";
  header.skills = {"s"};
  return header;
}

class EvalFailClosedTest : public ThresholdsFixture {};

// A review gate that cannot judge -------------------------------------------

TEST(EvalGateJudgeErrorTest, IsAJudgeErrorEverywhereNotAnInvocationError) {
  json::object gate = GateJudgeErrorRecord("s", "c1");
  EXPECT_EQ(OutcomeOf(gate), CaseOutcome::kJudgeError);
  EXPECT_EQ(OutcomeOf(testing::ErrorRecord("s", "c2")), CaseOutcome::kError);

  json::object summary = SummaryJson(Header(), {gate, PassRecord("s", "c2"), testing::ErrorRecord("s", "c3")});
  const json::object& s = summary.at("skills").at("s").as_object();
  EXPECT_EQ(s.at("judge_errors"), 1);
  EXPECT_EQ(s.at("schema_compliance"), 0.5);  // 1 valid of 2: the gate's judge error is in neither part
  EXPECT_EQ(s.at("schema_checked"), 2);       // the denominator, said
  const std::string html = HtmlReport(summary, {gate}, {});
  EXPECT_NE(html.find("50.0% of 2 cases (1 with a review-gate judge error left out)"), std::string::npos)
      << html.substr(0, 3000);
  EXPECT_EQ(json::serialize(s.at("errors")), R"({"MAX_RETRIES_EXCEEDED":1})");
  EXPECT_EQ(s.at("judged"), 1);
  EXPECT_EQ(s.at("judge_error_rate"), 0.5);

  // No flip: a pass that became a judge error says nothing about the output.
  BaselineRun baseline{"r0", "", {}, {{"s/c1", CaseOutcome::kPass}}, {}};
  json::object comparison = CompareWithBaseline(summary, {gate}, baseline);
  EXPECT_EQ(comparison.at("flipped").as_array().size(), 0u);

  std::string xml = JunitXml(summary, {gate});
  EXPECT_NE(xml.find(R"(<error message="judge error: the judge of rubric &quot;q&quot; (model &quot;m&quot;) gave no )"
                     R"(usable verdict" type="JUDGE_ERROR">)"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(R"(tests="1" failures="0" errors="1")"), std::string::npos) << xml;
}

// Pass rates fail closed ----------------------------------------------------

TEST_F(EvalFailClosedTest, ManyJudgeErrorsAndAFewPassesAreABreachNotAGreenNight) {
  std::vector<json::object> records;
  for (int i = 0; i < 95; ++i) records.push_back(EvalJudgeError("j" + std::to_string(i)));
  for (int i = 0; i < 5; ++i) records.push_back(Judged("p" + std::to_string(i), true, "pass", "pass"));
  json::object summary = SummaryJson(Header(), records);
  const json::object& s = summary.at("skills").at("s").as_object();
  EXPECT_EQ(s.at("rubric_pass_rate"), 1.0);
  EXPECT_EQ(s.at("judge_errors"), 95);
  EXPECT_EQ(s.at("judge_error_rate"), 0.95);
  entry_.thresholds.rubric_pass_rate = 0.9;
  EXPECT_EQ(Messages(summary),
            (std::vector<std::string>{"s: judge error rate 0.950 is above the maximum 0.000 (95 judge error(s) in 100 "
                                      "case(s) sent to the judge)"}));
  // The suite may allow some.
  entry_.thresholds.max_judge_error_rate = 0.96;
  EXPECT_TRUE(Messages(summary).empty());
  // A skill without a rubric has no judge to break.
  entry_.rubric.clear();
  entry_.thresholds.max_judge_error_rate.reset();
  EXPECT_TRUE(Messages(summary).empty());
}

TEST_F(EvalFailClosedTest, APassWithAnIndeterminateCountedCriterionIsLeftOutOfThePassRate) {
  std::vector<json::object> records{
      Judged("1", true, "pass", "pass"),
      Judged("2", true, "indeterminate", "pass"),   // counted a: undecided, left out
      Judged("3", true, "indeterminate", "pass"),   // likewise
      Judged("4", false, "fail", "indeterminate"),  // failed on a: decided
      Judged("5", true, "pass", "indeterminate"),   // b does not count (below): a pass
  };
  SummaryHeader header = Header();
  header.counted_criteria["s"] = {"a"};
  json::object summary = SummaryJson(header, records);
  const json::object& s = summary.at("skills").at("s").as_object();
  EXPECT_EQ(s.at("judged"), 5);
  EXPECT_EQ(s.at("decided"), 3);
  EXPECT_EQ(s.at("indeterminate"), 2);
  EXPECT_EQ(s.at("indeterminate_rate"), 0.4);
  EXPECT_EQ(s.at("rubric_pass_rate"), 2.0 / 3.0);  // not 4 of 5
  EXPECT_EQ(s.at("criteria").at("a").at("counted"), true);
  EXPECT_EQ(s.at("criteria").at("b").at("counted"), false);
  // Every criterion counts when the header does not say otherwise: case 5 is
  // then undecided too.
  EXPECT_EQ(SummaryJson(Header(), records).at("skills").at("s").at("indeterminate"), 3);

  EXPECT_TRUE(Messages(summary).empty());  // max_indeterminate_rate: unchecked unless set
  entry_.thresholds.max_indeterminate_rate = 0.25;
  EXPECT_EQ(Messages(summary),
            (std::vector<std::string>{"s: indeterminate rate 0.400 is above the maximum 0.250 (2 of 5 judged case(s) "
                                      "passed with an indeterminate criterion)"}));
}

// results.jsonl stays valid UTF-8 -------------------------------------------

TEST(EvalUtf8Test, ExpectedMismatchMessagesNeverCutACharacter) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "é";  // 2 bytes each; byte 77 is in the middle of one
  auto errors = CompareExpected(ExpectedMode::kExact, json::value(text), json::value("x"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(IsValidUtf8(errors[0].message)) << errors[0].message;
  auto subset =
      CompareExpected(ExpectedMode::kSubset, json::parse(R"({"a": ")" + text + R"("})"), json::parse(R"({"a": "x"})"));
  ASSERT_EQ(subset.size(), 1u);
  EXPECT_TRUE(IsValidUtf8(subset[0].message)) << subset[0].message;
  EXPECT_EQ(TruncateUtf8("aé", 2), "a");
  EXPECT_EQ(ShortenUtf8("aéé", 4, "."), "aé.");
}

TEST(EvalUtf8Test, TheResultsWriterNeverWritesInvalidUtf8AndResumeReadsEveryLine) {
  TempTree tree;
  std::filesystem::path file = tree.Path("results.jsonl");
  {
    auto writer = ResultsWriter::Open(file);
    ASSERT_TRUE(writer) << writer.error().message;
    json::object bad{{"skill", "s"}, {"case", "c1"}, {"result", json::object{{"output", std::string("ab\xC3", 3)}}}};
    ASSERT_TRUE((*writer)->Append(bad));
    ASSERT_TRUE((*writer)->Append(json::object{{"skill", "s"}, {"case", "c2"}}));
    ASSERT_TRUE((*writer)->Flush());
  }
  EXPECT_TRUE(IsValidUtf8(ReadAll(file)));
  auto loaded = ReadResults(file, false);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->records.size(), 2u);
  EXPECT_EQ(loaded->records[0].at("result").at("output"), "ab\xEF\xBF\xBD");
  EXPECT_EQ(loaded->torn_bytes, 0u);
}

TEST(EvalUtf8Test, ACompleteLineIsNeverTornAndOldInvalidUtf8LinesAreKept) {
  TempTree tree;
  std::filesystem::path file = tree.Path("results.jsonl");
  // A middle line with invalid UTF-8 (as an older writer left it): kept.
  std::ofstream(file, std::ios::binary) << "{\"skill\":\"s\",\"case\":\"a\xC3\"}\n{\"skill\":\"s\",\"case\":\"b\"}\n";
  auto loaded = ReadResults(file, true);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->records.size(), 2u);
  EXPECT_EQ(loaded->repaired_lines, 1u);
  EXPECT_EQ(loaded->torn_bytes, 0u);
  // A complete last line that is not a record is an error, not a torn write
  // to drop silently.
  std::ofstream(file, std::ios::binary | std::ios::app) << "{\"skill\":\n";
  auto bad = ReadResults(file, true);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInternal);
  EXPECT_EQ(bad.error().message, file.string() + ":3: not a JSON object (results.jsonl holds one record per line)");
}

// Duplicates ----------------------------------------------------------------

TEST(EvalDedupeTest, ACaseRecordedTwiceCountsOnceTheLastRecordWins) {
  std::vector<json::object> records{testing::FailRecord("s", "c1"), PassRecord("s", "c2"), PassRecord("s", "c1"),
                                    PassRecord("s", "c1", 2)};
  EXPECT_EQ(DedupeRecords(records), 1u);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(CaseKey(records[0]), "s/c2");
  EXPECT_EQ(CaseKey(records[1]), "s/c1");
  EXPECT_EQ(OutcomeOf(records[1]), CaseOutcome::kPass);
  EXPECT_EQ(CaseKey(records[2]), "s/c1#2");
}

// Failed writes -------------------------------------------------------------

// In a child process (RLIMIT_FSIZE is per process): the file may grow to 100
// bytes, so the second 60-byte line is cut short by the kernel (a partial
// write, then EFBIG). The writer must cut it back off and refuse every later
// Append. The child reports through its exit status.
TEST(EvalResultsLogTest, AFailedWriteLeavesNoPartialLineAndStopsLaterAppends) {
  TempTree tree;
  std::filesystem::path file = tree.Path("results.jsonl");
  json::object record{{"skill", "s"}, {"case", "c"}, {"pad", std::string(30, 'x')}};  // 64 bytes with its newline
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{100, 100};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    auto writer = ResultsWriter::Open(file);
    if (!writer) _exit(11);
    if (!(*writer)->Append(record)) _exit(12);
    auto second = (*writer)->Append(record);
    if (second) _exit(13);
    if (second.error().message.find("cannot write " + file.string() + ": ") != 0) _exit(14);
    if (second.error().code != ErrorCode::kInternal) _exit(16);
    auto third = (*writer)->Append(json::object{{"skill", "s"}, {"case", "tiny"}});  // would fit: still refused
    if (third ||
        third.error().message.find("not writing to " + file.string() + " after an earlier write failed: ") != 0) {
      _exit(15);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::string text = ReadAll(file);
  EXPECT_EQ(text, json::serialize(record) + "\n");  // the first line only, whole
  auto loaded = ReadResults(file, false);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->records.size(), 1u);
  EXPECT_EQ(loaded->torn_bytes, 0u);
}

// Progress ------------------------------------------------------------------

TEST(EvalProgressTest, PlainLinesComeWithTimeEvenWhenNoCaseFinishes) {
  TempTree tree;
  std::filesystem::path file = tree.Path("progress.txt");
  std::FILE* out = std::fopen(file.c_str(), "w");
  ASSERT_NE(out, nullptr);
  {
    Progress progress(out, false, 10, 0, std::chrono::milliseconds(40));
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // no case finishes
    progress.Finish();
  }
  std::fclose(out);
  std::string text = ReadAll(file);
  std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_GE(lines, 3u) << text;  // at least two periodic lines and the final one
  EXPECT_EQ(text.rfind("eval: 0/10 cases, cases passed -, 0 failed, 0 errors, 0 judge errors, 0 tokens", 0), 0u)
      << text;
}

// Exact matching ------------------------------------------------------------

TEST(EvalExpectedMatchTest, ExactComparesNumbersByValueAtEveryDepth) {
  EXPECT_TRUE(CompareExpected(ExpectedMode::kExact, json::parse(R"({"score": 1, "xs": [{"v": 2}]})"),
                              json::parse(R"({"xs": [{"v": 2.0}], "score": 1.0})"))
                  .empty());
  EXPECT_EQ(
      CompareExpected(ExpectedMode::kExact, json::parse(R"({"score": 1})"), json::parse(R"({"score": 1.5})")).size(),
      1u);
  EXPECT_EQ(CompareExpected(ExpectedMode::kExact, json::parse(R"([1, 2])"), json::parse(R"([2, 1])")).size(), 1u);
}

// Regression gates and unstable criteria ------------------------------------

TEST_F(EvalFailClosedTest, TheSkillRateRegressionGateIgnoresADropThatComesOnlyFromUnstableCriteria) {
  // b is unstable (its re-judgings disagree); the baseline passed everything.
  // Now b fails in 20 of 40 cases (b is counted), a passes everywhere: a drop
  // the paired test calls significant, so only the unstable rule keeps it out.
  // (The baseline summary has no per-criterion rates: no criterion deltas.)
  std::vector<json::object> records;
  for (int i = 0; i < 40; ++i) {
    const bool b_fails = i % 4 < 2;
    json::object r = Judged(std::to_string(i), !b_fails, "pass", b_fails ? "fail" : "pass");
    r["rejudges"] = json::array{json::parse(Verdict(true, "pass", b_fails ? "pass" : "fail"))};
    records.push_back(std::move(r));
  }
  json::object summary = SummaryJson(Header(), records);
  ASSERT_EQ(summary.at("skills").at("s").at("criteria").at("b").at("unstable"), true);
  ASSERT_EQ(summary.at("skills").at("s").at("rubric_pass_rate"), 0.5);
  BaselineRun baseline{
      "r0", "", RunSummary::FromJson(ParseObject(R"({"skills": {"s": {"rubric_pass_rate": 1.0}}})")), {}, {}};
  for (int i = 0; i < 40; ++i) {
    baseline.outcomes["s/" + std::to_string(i)] = CaseOutcome::kPass;
    baseline.verdicts["s/" + std::to_string(i)] = {{"a", "pass"}, {"b", "pass"}};
  }
  summary["baseline"] = CompareWithBaseline(summary, records, baseline);
  EXPECT_EQ(summary.at("baseline").at("skills").at("s").at("rubric_pass_rate_delta"), -0.5);
  EXPECT_EQ(summary.at("baseline").at("skills").at("s").at("rubric_pass_rate_stable_delta"), 0.0);
  entry_.thresholds.max_regression = 0.05;
  EXPECT_TRUE(Messages(summary).empty());
  // When the suite gates on unstable criteria, the whole drop counts.
  suite_.gate_unstable_criteria = true;
  EXPECT_EQ(Messages(summary),
            (std::vector<std::string>{
                "s: case pass rate fell by 0.500 against the baseline, more than the allowed 0.050 (20 pass->fail, "
                "0 fail->pass of 40 paired cases; McNemar p = 1.91e-06 < 0.05)",
                "s: rubric pass rate fell by 0.500 against the baseline, more than the allowed 0.050 (20 pass->fail, "
                "0 fail->pass of 40 paired cases; McNemar p = 1.91e-06 < 0.05)"}));
  // A drop on a stable criterion still breaches through the stable rate.
  suite_.gate_unstable_criteria = false;
  for (int i = 0; i < 40; i += 4) {
    records[static_cast<std::size_t>(i)]["review"] = json::parse(Verdict(false, "fail", "fail"));
    // a agrees with itself, b does not
    records[static_cast<std::size_t>(i)]["rejudges"] = json::array{json::parse(Verdict(false, "fail", "pass"))};
  }
  summary = SummaryJson(Header(), records);
  summary["baseline"] = CompareWithBaseline(summary, records, baseline);
  EXPECT_EQ(summary.at("baseline").at("skills").at("s").at("rubric_pass_rate_stable_delta"), -0.25);
  EXPECT_EQ(Messages(summary),
            (std::vector<std::string>{"s: rubric pass rate (stable criteria) fell by 0.250 against the baseline, more "
                                      "than the allowed 0.050 (20 pass->fail, 0 fail->pass of 40 paired cases; "
                                      "McNemar p = 1.91e-06 < 0.05)"}));
}

}  // namespace
}  // namespace skillrunner::eval
