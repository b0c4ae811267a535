#include "runner/eval/report/html_cases.h"

#include <algorithm>
#include <tuple>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/case_record.h"
#include "runner/eval/report/report_markup.h"
#include "services/common/json_text.h"

namespace skillrunner::eval::report {
namespace json = boost::json;

namespace {

// Enough raw text to see what the model did; a runaway answer of megabytes
// would make the report unusable.
constexpr std::size_t kMaxRawBytes = 4096;
constexpr std::size_t kMaxHeadlineBytes = 200;
// Past this many cases per list the report points to results.jsonl instead.
constexpr std::size_t kMaxCasesPerList = 200;

std::string Pre(std::string_view text) {
  std::string_view shown = TruncateUtf8(text, kMaxRawBytes);
  std::string html = "<pre>" + EscapeMarkup(shown) + "</pre>";
  if (shown.size() < text.size()) {
    html += "<p class=\"muted\">… " + std::to_string(text.size() - shown.size()) +
            " more bytes not shown (see results.jsonl).</p>";
  }
  return html;
}

std::string List(const std::vector<std::string>& lines) {
  if (lines.empty()) return {};
  std::string html = "<ul>";
  for (const std::string& line : lines) html += "<li>" + EscapeMarkup(line) + "</li>";
  return html + "</ul>";
}

std::string Fact(std::string_view name, const std::string& value) {
  return "<span class=\"fact\">" + EscapeMarkup(name) + " <b>" + EscapeMarkup(value) + "</b></span>";
}

std::string Attempts(const json::array* attempts, std::string_view heading) {
  if (attempts == nullptr || attempts->empty()) return {};
  std::string html =
      "<h4>" + EscapeMarkup(heading) + " (" + std::to_string(attempts->size()) + ")</h4><ol class=\"attempts\">";
  for (const json::value& value : *attempts) {
    const json::object* attempt = value.is_object() ? &value.as_object() : nullptr;
    std::string_view kind = TextAt(attempt, "kind");
    html += "<li><div class=\"facts\">";
    html += Fact("#", FormatValue(attempt ? attempt->if_contains("n") : nullptr));
    html += Fact("kind", kind.empty() ? std::string(kDash) : std::string(kind));
    html += Fact("temperature", FormatNumber(NumberAt(attempt, "temperature")));
    if (auto status = NumberAt(attempt, "http_status")) html += Fact("HTTP", FormatNumber(status));
    if (auto waited = NumberAt(attempt, "waited_ms"); waited && *waited > 0) {
      html += Fact("waited", FormatMs(waited));
    }
    html += Fact("tokens in/out", FormatNumber(NumberAt(attempt, "input_tokens")) + " / " +
                                      FormatNumber(NumberAt(attempt, "output_tokens")));
    html += Fact("took", FormatMs(NumberAt(attempt, "duration_ms")));
    html += "</div>";
    html += List(ErrorLines(ArrayAt(attempt, "errors")));
    if (const json::value* raw = attempt ? attempt->if_contains("raw") : nullptr; raw != nullptr && !raw->is_null()) {
      html += Pre(raw->is_string() ? std::string_view(raw->as_string()) : std::string_view(CompactJson(*raw)));
    }
    html += "</li>";
  }
  return html + "</ol>";
}

std::string ErrorBlock(const json::object* error, std::string_view heading) {
  if (error == nullptr) return {};
  std::string html = "<h4>" + EscapeMarkup(heading) + "</h4><p><code>" +
                     EscapeMarkup(FormatValue(error->if_contains("code"))) + "</code> " +
                     EscapeMarkup(TextAt(error, "message")) + "</p>";
  html += List(ErrorLines(ArrayAt(error, "errors")));
  if (const json::object* details = ObjectAt(error, "details")) html += Pre(CompactJson(*details));
  return html;
}

std::string Review(const json::object* review) {
  if (review == nullptr) return {};
  std::string html = "<h4>Review</h4>";
  const json::value* pass = review->if_contains("pass");
  html += "<p>" + Fact("pass", FormatValue(pass)) + "</p>";
  if (const json::array* results = ArrayAt(review, "criteria_results"); results && !results->empty()) {
    html +=
        "<table><thead><tr><th>Criterion</th><th>Verdict</th><th>Confidence</th>"
        "<th>Reasoning</th></tr></thead><tbody>";
    for (const json::value& value : *results) {
      const json::object* result = value.is_object() ? &value.as_object() : nullptr;
      std::string verdict(TextAt(result, "verdict"));
      html += "<tr><td>" + EscapeMarkup(TextAt(result, "criterion_id")) + "</td><td class=\"v-" +
              EscapeMarkup(verdict, true) + "\">" + EscapeMarkup(verdict.empty() ? std::string(kDash) : verdict) +
              "</td><td>" + FormatNumber(NumberAt(result, "confidence")) + "</td><td>" +
              EscapeMarkup(TextAt(result, "reasoning")) + "</td></tr>";
    }
    html += "</tbody></table>";
  }
  if (const json::array* fixes = ArrayAt(review, "suggested_fixes"); fixes && !fixes->empty()) {
    std::vector<std::string> lines;
    for (const json::value& fix : *fixes) lines.push_back(FormatValue(&fix));
    html += "<p>Suggested fixes:</p>" + List(lines);
  }
  return html;
}

std::string Headline(const json::object& record, CaseOutcome outcome) {
  std::string headline;
  if (outcome == CaseOutcome::kFail) {
    std::vector<std::string> reasons = FailureReasons(record);
    headline = reasons.empty() ? "failed" : reasons.front();
    if (reasons.size() > 1) headline += " (+" + std::to_string(reasons.size() - 1) + " more)";
  } else {
    const bool own = outcome == CaseOutcome::kError || outcome == CaseOutcome::kRefused;
    const json::object* error = own ? ErrorOf(record) : JudgeErrorOf(record);
    headline = FormatValue(error ? error->if_contains("code") : nullptr) + ": " + std::string(TextAt(error, "message"));
  }
  std::string_view cut = TruncateUtf8(headline, kMaxHeadlineBytes);
  return std::string(cut) + (cut.size() < headline.size() ? "…" : "");
}

// design.md §12.3: every check of the case, passed or not: op, pointer, expected, actual, message.
std::string ChecksTable(const CaseRecord& record) {
  if (record.checks.empty()) return "";
  std::string html =
      "<h4>Checks</h4><table><thead><tr><th>Result</th><th>Op</th><th>Pointer</th><th>Expected</th><th>Actual</th>"
      "<th>Message</th></tr></thead><tbody>";
  for (const CheckResult& check : record.checks) {
    const std::string op = (check.negate ? "not " : "") + check.op;
    const json::value* expected = check.expected ? &*check.expected : nullptr;
    const json::value* actual = check.actual ? &*check.actual : nullptr;
    html += "<tr><td><span class=\"tag " + std::string(check.pass ? "pass" : "fail") + "\">" +
            (check.pass ? "pass" : "fail") + "</span></td><td>" + EscapeMarkup(op) + "</td><td><code>" +
            EscapeMarkup(check.pointer) + "</code></td><td>" + EscapeMarkup(FormatValue(expected)) + "</td><td>" +
            EscapeMarkup(FormatValue(actual)) + "</td><td>" + EscapeMarkup(check.message) + "</td></tr>";
  }
  return html + "</tbody></table>";
}

// The failed gates as tags, in the order that types the JUnit failure.
std::string GateTags(const CaseRecord& record) {
  std::string html;
  for (const GateFailure& gate : record.FailedGates()) {
    html += " <span class=\"tag fail\">" + std::string(GateType(gate.gate)) + "</span>";
  }
  return html;
}

std::string CaseDetails(const json::object& record, CaseOutcome outcome) {
  std::string name = SkillLabel(record) + " / " + std::string(CaseIdOf(record));
  if (const std::int64_t repeat = RepeatOf(record); repeat > 0) name += " #" + std::to_string(repeat);
  std::string outcome_name(CaseOutcomeName(outcome));
  const CaseRecord typed = CaseRecord::FromJson(record);
  std::string html = "<details><summary><span class=\"tag " + outcome_name + "\">" + outcome_name + "</span>" +
                     GateTags(typed) + " <b>" + EscapeMarkup(name) + "</b> — " +
                     EscapeMarkup(Headline(record, outcome)) + "</summary><div class=\"case\">";
  html += "<div class=\"facts\">" + Fact("took", FormatMs(CaseDurationMs(record))) + "</div>";
  if (outcome == CaseOutcome::kFail) html += "<h4>Why it failed</h4>" + List(FailureReasons(record));
  if (typed.input) html += "<h4>Input</h4>" + Pre(PrettyJson(*typed.input));
  html += ChecksTable(typed);
  // A review-gate judge error is the record's "error"; show it once, as the
  // judge's.
  bool gate_judge_error = IsGateJudgeError(record);
  if (!gate_judge_error) html += ErrorBlock(ErrorOf(record), "Error");
  const json::object* judge_error = JudgeErrorOf(record);
  html += ErrorBlock(judge_error, gate_judge_error ? "Judge error (the skill's review gate)" : "Judge error");
  html += Review(ReviewOf(record));
  const json::object* result = ResultOf(record);
  if (const json::value* output = result ? result->if_contains("output") : nullptr) {
    html += "<h4>Output</h4>" + Pre(PrettyJson(*output));
  }
  const json::array* attempts = ArrayAt(result, "attempts");
  if (attempts == nullptr) attempts = ArrayAt(ErrorOf(record), "attempts");
  html += Attempts(attempts, "Attempts");
  if (!gate_judge_error) html += Attempts(ArrayAt(judge_error, "attempts"), "Judge attempts");
  return html + "</div></details>";
}

std::string CaseList(std::string_view id, std::string_view title, std::string_view note,
                     const std::vector<const json::object*>& cases, CaseOutcome outcome) {
  std::string html = "<h3 id=\"" + std::string(id) + "\">" + EscapeMarkup(title) + " (" + std::to_string(cases.size()) +
                     ")</h3><p class=\"muted\">" + EscapeMarkup(note) + "</p>";
  if (cases.empty()) return html + "<p>None.</p>";
  std::size_t shown = std::min(cases.size(), kMaxCasesPerList);
  for (std::size_t i = 0; i < shown; ++i) html += CaseDetails(*cases[i], outcome);
  if (shown < cases.size()) {
    html += "<p class=\"muted\">" + std::to_string(cases.size() - shown) + " more not shown; see results.jsonl.</p>";
  }
  return html;
}

}  // namespace

std::string FailingCasesSection(const std::vector<json::object>& records) {
  std::vector<const json::object*> failed, errors, judge_errors, refused;
  for (const json::object& record : records) {
    switch (OutcomeOf(record)) {
      case CaseOutcome::kPass:
        break;
      case CaseOutcome::kRefused:
        refused.push_back(&record);
        break;
      case CaseOutcome::kFail:
        failed.push_back(&record);
        break;
      case CaseOutcome::kError:
        errors.push_back(&record);
        break;
      case CaseOutcome::kJudgeError:
        judge_errors.push_back(&record);
        break;
    }
  }
  auto by_identity = [](const json::object* a, const json::object* b) {
    return std::make_tuple(SkillLabel(*a), CaseIdOf(*a), RepeatOf(*a)) <
           std::make_tuple(SkillLabel(*b), CaseIdOf(*b), RepeatOf(*b));
  };
  for (auto* list : {&failed, &errors, &judge_errors, &refused}) {
    std::stable_sort(list->begin(), list->end(), by_identity);
  }
  std::string html = "<section id=\"failures\"><h2>Failing cases</h2>";
  html += CaseList("failed", "Failed",
                   "Valid output, but the expected values did not match, a check failed or the review failed.", failed,
                   CaseOutcome::kFail);
  html += CaseList("errors", "Errors", "No valid output: the invocation itself failed.", errors, CaseOutcome::kError);
  html += CaseList("judge-errors", "Judge errors",
                   "The judge gave no usable verdict. These cases count neither as passed nor as "
                   "failed; the rubric pass rate leaves them out.",
                   judge_errors, CaseOutcome::kJudgeError);
  if (!refused.empty()) {  // a list of its own only when some case was refused
    html += CaseList("refused", "Refused",
                     "The model refused, or the provider's filter withheld the answer (REFUSED, CONTENT_FILTERED). "
                     "Counted apart from failures: the refusal rate.",
                     refused, CaseOutcome::kRefused);
  }
  return html + "</section>";
}

}  // namespace skillrunner::eval::report
