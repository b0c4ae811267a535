#include "runner/eval/report/junit_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/case_record.h"
#include "runner/eval/report/report_markup.h"

namespace skillrunner::eval {
namespace json = boost::json;
using report::EscapeMarkup;
using report::TextAt;

namespace {

// A failure message attribute is a one-line headline; the full text goes in
// the element's body.
constexpr std::size_t kMaxMessageBytes = 1000;

struct Counts {
  std::size_t tests = 0;
  std::size_t failures = 0;
  std::size_t errors = 0;
  double seconds = 0;
};

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds);
  return buffer;
}

std::string Attribute(std::string_view name, std::string_view value) {
  return " " + std::string(name) + "=\"" + EscapeMarkup(value, true) + "\"";
}

std::string Join(const std::vector<std::string>& lines, std::string_view separator) {
  std::string joined;
  for (const std::string& line : lines) {
    if (!joined.empty()) joined += separator;
    joined += line;
  }
  return joined;
}

// <failure> or <error> with a headline, a type and the details as text.
std::string Problem(std::string_view element, std::string_view type, std::string_view headline,
                    const std::vector<std::string>& details) {
  std::string xml = "      <" + std::string(element);
  xml += Attribute("message", report::TruncateUtf8(headline, kMaxMessageBytes));
  xml += Attribute("type", type);
  xml += ">";
  xml += EscapeMarkup(Join(details, "\n"));
  xml += "</" + std::string(element) + ">\n";
  return xml;
}

std::string ErrorElement(const json::object* error, std::string_view fallback_type) {
  std::string_view code = TextAt(error, "code");
  std::string type(code.empty() ? fallback_type : code);
  std::string message(TextAt(error, "message"));
  std::vector<std::string> details{message};
  for (std::string& line : report::ErrorLines(report::ArrayAt(error, "errors"))) {
    details.push_back(std::move(line));
  }
  return Problem("error", type, message.empty() ? type : message, details);
}

// Always typed JUDGE_ERROR, whatever code the judge's failure carried, so CI shows it as "the
// judge broke", not as a bad output: the eval judge's "judge_error", or the review gate's (an
// "error" with code JUDGE_ERROR).
std::string JudgeErrorElement(const json::object& record) {
  const json::object* judge = JudgeErrorOf(record);
  std::string message = "judge error";
  if (std::string_view text = TextAt(judge, "message"); !text.empty()) {
    message += ": " + std::string(text);
  }
  std::vector<std::string> details{message};
  for (std::string& line : report::ErrorLines(report::ArrayAt(judge, "errors"))) {
    details.push_back(std::move(line));
  }
  return Problem("error", "JUDGE_ERROR", message, details);
}

// design.md §12.3: one <failure> per failed case, typed by its first failed gate (SCHEMA_INVALID,
// EXPECTED_MISMATCH, CHECK_FAILED, REVIEW_FAILED, then a refusal by its code), its message listing
// every failed gate with its own message, and every detail in the body.
std::string GateFailureElement(const CaseRecord& record, const std::vector<GateFailure>& failed) {
  const Gate first = failed.front().gate;
  const std::string type(first == Gate::kRefusal ? record.ErrorCode() : GateType(first));
  std::string headline;
  std::vector<std::string> details;
  for (const GateFailure& gate : failed) {
    headline += (headline.empty() ? "" : " | ") + std::string(GateType(gate.gate)) + ": " + gate.message;
    details.push_back(std::string(GateType(gate.gate)) + ":");
    for (const std::string& line : gate.lines) details.push_back("  " + line);
  }
  return Problem("failure", type, headline, details);
}

std::string TestCase(const json::object& json, Counts& counts) {
  const CaseRecord record = CaseRecord::FromJson(json);
  std::string name = record.case_id;
  if (record.repeat > 0) name += "#" + std::to_string(record.repeat);
  double seconds = report::CaseDurationMs(json).value_or(0) / 1000.0;
  counts.tests++;
  counts.seconds += seconds;

  std::string xml = "    <testcase" + Attribute("classname", record.Label()) + Attribute("name", name) +
                    Attribute("time", Seconds(seconds));
  const CaseOutcome outcome = OutcomeOf(json);
  if (outcome == CaseOutcome::kPass) return xml + "/>\n";
  std::string body;
  if (outcome == CaseOutcome::kJudgeError) {
    counts.errors++;
    body = JudgeErrorElement(json);
  } else if (std::vector<GateFailure> failed = record.FailedGates(); !failed.empty()) {
    counts.failures++;
    body = GateFailureElement(record, failed);
  } else {
    // A provider or handler error, a timeout: the case could not be judged.
    counts.errors++;
    body = ErrorElement(ErrorOf(json), "ERROR");
  }
  return xml + ">\n" + body + "    </testcase>\n";
}

std::string Counted(const Counts& counts) {
  return Attribute("tests", std::to_string(counts.tests)) + Attribute("failures", std::to_string(counts.failures)) +
         Attribute("errors", std::to_string(counts.errors)) + Attribute("skipped", "0") +
         Attribute("time", Seconds(counts.seconds));
}

// Records grouped by skill (skills of the summary included even without a
// record), each group in case order: results.jsonl is in completion order,
// which differs between runs.
std::map<std::string, std::vector<const json::object*>> BySkill(const RunSummary& summary,
                                                                const std::vector<json::object>& records) {
  std::map<std::string, std::vector<const json::object*>> groups;
  for (const auto& entry : summary.skills) groups[entry.first];
  for (const json::object& record : records) {
    groups[SkillLabel(record)].push_back(&record);
  }
  auto repeat_of = [](const json::object* record) { return RepeatOf(*record); };
  for (auto& [skill, group] : groups) {
    std::stable_sort(group.begin(), group.end(), [&](const json::object* a, const json::object* b) {
      return std::make_tuple(CaseIdOf(*a), repeat_of(a)) < std::make_tuple(CaseIdOf(*b), repeat_of(b));
    });
  }
  return groups;
}

}  // namespace

std::string JunitXml(const RunSummary& summary, const std::vector<json::object>& records) {
  std::string_view run_id = summary.run_id;
  std::string_view suite = summary.suite;
  std::string properties = "    <properties>\n      <property" + Attribute("name", "run_id") +
                           Attribute("value", run_id) + "/>\n      <property" + Attribute("name", "suite") +
                           Attribute("value", suite) + "/>\n    </properties>\n";

  Counts total;
  std::string suites;
  for (const auto& [skill, group] : BySkill(summary, records)) {
    Counts counts;
    std::string cases;
    for (const json::object* record : group) cases += TestCase(*record, counts);
    suites +=
        "  <testsuite" + Attribute("name", skill) + Counted(counts) + ">\n" + properties + cases + "  </testsuite>\n";
    total.tests += counts.tests;
    total.failures += counts.failures;
    total.errors += counts.errors;
    total.seconds += counts.seconds;
  }
  // The suite's wall time, when known, is more honest than the sum of cases
  // that ran concurrently.
  if (summary.duration_ms > 0) total.seconds = static_cast<double>(summary.duration_ms) / 1000.0;
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + Attribute("name", suite) + Counted(total) + ">\n" +
         suites + "</testsuites>\n";
}

}  // namespace skillrunner::eval
