#include "runner/eval/records/case_record.h"

#include <algorithm>

#include "runner/eval/records/record_fields.h"
#include "services/common/json_pointer.h"
#include "services/common/json_text.h"
#include "services/common/utf8.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

std::optional<json::object> ObjectMember(const json::object& json, std::string_view key) {
  if (const json::object* found = ObjectAt(&json, key)) return *found;
  return std::nullopt;
}

std::optional<bool> BoolMember(const json::object& json, std::string_view key) {
  const json::value* found = json.if_contains(key);
  if (found == nullptr || !found->is_bool()) return std::nullopt;
  return found->as_bool();
}

std::optional<json::value> ValueMember(const json::object& json, std::string_view key) {
  const json::value* found = json.if_contains(key);
  if (found == nullptr) return std::nullopt;
  return *found;
}

CheckResult CheckFromJson(const json::value& value) {
  CheckResult check;
  const json::object* o = value.if_object();
  if (o == nullptr) return check;
  check.op = TextAt(o, "op");
  check.pointer = TextAt(o, "pointer");
  check.negate = BoolMember(*o, "negate").value_or(false);
  check.pass = BoolMember(*o, "pass").value_or(false);
  check.expected = ValueMember(*o, "expected");
  check.actual = ValueMember(*o, "actual");
  check.score = NumberAt(o, "score");
  check.message = TextAt(o, "message");
  return check;
}

json::object CheckJson(const CheckResult& check) {
  json::object out;
  if (check.op != "exec") out["pointer"] = check.pointer;
  out["op"] = check.op;
  if (check.negate) out["negate"] = true;
  out["pass"] = check.pass;
  if (check.expected) out["expected"] = *check.expected;
  if (check.actual) out["actual"] = *check.actual;
  if (check.score) out["score"] = *check.score;
  if (!check.message.empty()) out["message"] = check.message;
  return out;
}

// The members FromJson reads; any other is kept in `other`.
constexpr std::string_view kKnown[] = {"skill",
                                       "version",
                                       "case",
                                       "repeat",
                                       "record_schema",
                                       "input",
                                       "tags",
                                       "human",
                                       "rejudged_from",
                                       "result",
                                       "error",
                                       "expected_match",
                                       "expected_mismatches",
                                       "checks",
                                       "check_pass",
                                       "rubric",
                                       "review",
                                       "judge_error",
                                       "rejudges",
                                       "judge_usage",
                                       "duration_ms",
                                       "case_criteria"};

void ReadGates(const json::object& json, CaseRecord& record) {
  record.expected_match = BoolMember(json, "expected_match");
  if (const json::array* mismatches = ArrayAt(&json, "expected_mismatches")) {
    for (const json::value& m : *mismatches) {
      const json::object* o = m.if_object();
      record.expected_mismatches.push_back(
          FieldMismatch{std::string(TextAt(o, "path")), std::string(TextAt(o, "message"))});
    }
  }
  if (const json::array* checks = ArrayAt(&json, "checks")) {
    for (const json::value& c : *checks) record.checks.push_back(CheckFromJson(c));
  }
  record.check_pass = BoolMember(json, "check_pass");
  record.rubric = TextAt(&json, "rubric");
  if (const json::array* ids = ArrayAt(&json, "case_criteria")) {
    for (const json::value& id : *ids) {
      if (id.is_string()) record.case_criteria.emplace_back(id.as_string());
    }
  }
  record.review = ObjectMember(json, "review");
  record.judge_error = ObjectMember(json, "judge_error");
  if (const json::array* rejudges = ArrayAt(&json, "rejudges")) record.rejudges = *rejudges;
  record.judge_usage = ObjectMember(json, "judge_usage");
}

void WriteGates(const CaseRecord& record, json::object& out) {
  if (record.expected_match) out["expected_match"] = *record.expected_match;
  if (!record.expected_mismatches.empty()) {
    json::array list;
    for (const auto& m : record.expected_mismatches)
      list.push_back(json::object{{"path", m.path}, {"message", m.message}});
    out["expected_mismatches"] = std::move(list);
  }
  if (!record.checks.empty()) {
    json::array list;
    for (const auto& c : record.checks) list.push_back(c.ToJson());
    out["checks"] = std::move(list);
  }
  if (record.check_pass) out["check_pass"] = *record.check_pass;
  if (!record.rubric.empty()) out["rubric"] = record.rubric;
  if (!record.case_criteria.empty()) {
    json::array ids;
    for (const std::string& id : record.case_criteria) ids.emplace_back(id);
    out["case_criteria"] = std::move(ids);
  }
  if (record.review) out["review"] = *record.review;
  if (record.judge_error) out["judge_error"] = *record.judge_error;
  if (record.rejudges) out["rejudges"] = *record.rejudges;
  if (record.judge_usage) out["judge_usage"] = *record.judge_usage;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string joined;
  for (const std::string& line : lines) joined += (joined.empty() ? "" : "; ") + line;
  return joined;
}

std::string ValueText(const json::value& value) {
  return value.is_string() ? std::string(value.as_string()) : CompactJson(value);
}

// The review's failed criteria ("criterion ID failed: reasoning") and its
// issues, each once: an issue that only repeats a failed criterion's
// reasoning ("ID: reasoning") gives way to the criterion's own line.
std::vector<std::string> ReviewLines(const json::object& review) {
  std::vector<std::string> criteria, echoed, lines;
  if (const json::array* results = ArrayAt(&review, "criteria_results")) {
    for (const json::value& result : *results) {
      const json::object* r = result.if_object();
      if (r == nullptr || TextAt(r, "verdict") != "fail") continue;
      const std::string id(TextAt(r, "criterion_id"));
      const std::string reasoning(TextAt(r, "reasoning"));
      criteria.push_back("criterion " + id + " failed" + (reasoning.empty() ? "" : ": " + reasoning));
      echoed.push_back(id + ": " + reasoning);
    }
  }
  auto add = [&lines](std::string line) {
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  };
  if (const json::array* issues = ArrayAt(&review, "issues")) {
    for (const json::value& issue : *issues) {
      std::string line = ValueText(issue);
      if (std::find(echoed.begin(), echoed.end(), line) == echoed.end()) add(std::move(line));
    }
  }
  for (std::string& line : criteria) add(std::move(line));
  return lines;
}

std::string CheckLine(const CheckResult& check) {
  std::string line = "check " + std::string(check.negate ? "not " : "") + check.op;
  if (!check.pointer.empty()) line += " " + check.pointer;
  return line + ": " + (check.message.empty() ? std::string("failed") : check.message);
}

GateFailure Failure(Gate gate, std::vector<std::string> lines) {
  return GateFailure{gate, Joined(lines), std::move(lines)};
}

}  // namespace

std::vector<std::string> ErrorLines(const json::array* errors) {
  std::vector<std::string> lines;
  for (const json::value& e : errors ? *errors : json::array()) {
    if (!e.is_object()) {
      lines.push_back(ValueText(e));
      continue;
    }
    std::string_view path = TextAt(&e.as_object(), "path");
    lines.push_back(std::string(path.empty() ? "(root)" : path) + ": " +
                    std::string(TextAt(&e.as_object(), "message")));
  }
  return lines;
}

json::value KeptValue(const json::value& value) {
  if (value.is_string()) {
    const std::string_view text = value.as_string();
    if (text.size() <= kKeptStringBytes) return value;
    return json::string(std::string(TruncateUtf8(text, kKeptStringBytes)) + "… [cut: " + std::to_string(text.size()) +
                        " bytes]");
  }
  if (value.is_array()) {
    json::array out;
    for (const json::value& item : value.as_array()) out.push_back(KeptValue(item));
    return out;
  }
  if (value.is_object()) {
    json::object out;
    for (const auto& [key, item] : value.as_object()) out[key] = KeptValue(item);
    return out;
  }
  return value;
}

namespace {

// A value at `path` holds the field at `masked`, or is inside it: either way it shows what was masked.
bool Overlaps(std::string_view path, std::string_view masked) {
  return PointerUnder(path, masked).has_value() || PointerUnder(masked, path).has_value();
}

void MaskAttempts(json::object& answer) {
  json::value* attempts = answer.if_contains("attempts");
  if (attempts == nullptr || !attempts->is_array()) return;
  for (json::value& attempt : attempts->as_array()) {
    if (json::object* a = attempt.if_object(); a && a->contains("raw")) (*a)["raw"] = kRedacted;
  }
}

}  // namespace

void CaseRecord::Redact(const std::vector<std::string>& pointers) {
  for (const std::string& pointer : pointers) {
    if (auto under = PointerUnder(pointer, "/input")) {
      if (input) MaskAt(*input, *under, kRedacted);
      continue;
    }
    const std::optional<std::string_view> output_at = PointerUnder(pointer, "/output");
    if (!output_at) continue;
    const std::string_view at = *output_at;
    if (result) {
      if (json::value* output = result->if_contains("output")) MaskAt(*output, at, kRedacted);
      MaskAttempts(*result);
    }
    if (error) MaskAttempts(*error);
    for (CheckResult& check : checks) {
      if (check.op == "exec" || check.pointer.starts_with("/metrics/") || !Overlaps(check.pointer, at)) continue;
      if (check.actual) check.actual = json::string(kRedacted);
      if (!check.message.empty()) check.message = kRedacted;
    }
    for (FieldMismatch& mismatch : expected_mismatches) {
      if (Overlaps(mismatch.path, at)) mismatch.message = kRedacted;
    }
  }
}

json::object CheckResult::ToJson() const { return CheckJson(*this); }

json::object JudgeUsage::ToJson() const {
  json::object usage{
      {"input_tokens", input_tokens}, {"cached_input_tokens", cached_input_tokens}, {"output_tokens", output_tokens}};
  if (cost_usd) usage["cost_usd"] = *cost_usd;
  if (batched) {
    usage["batch_cost_usd"] = batch_cost_usd ? json::value(*batch_cost_usd) : nullptr;
    usage["online_cost_usd"] = online_cost_usd ? json::value(*online_cost_usd) : nullptr;
  }
  return usage;
}

json::value RejudgeJson(std::optional<json::value> review, std::optional<json::object> judge_error) {
  if (review) return std::move(*review);
  return json::object{{"judge_error", judge_error ? json::value(std::move(*judge_error)) : json::value(nullptr)}};
}

std::string_view GateType(Gate gate) {
  switch (gate) {
    case Gate::kSchema:
      return "SCHEMA_INVALID";
    case Gate::kExpected:
      return "EXPECTED_MISMATCH";
    case Gate::kCheck:
      return "CHECK_FAILED";
    case Gate::kReview:
      return "REVIEW_FAILED";
    case Gate::kRefusal:
      return "REFUSED";
  }
  return "FAILED";
}

CaseRecord CaseRecord::FromJson(const json::object& json) {
  CaseRecord record;
  record.skill = TextAt(&json, "skill");
  if (const json::value* v = json.if_contains("version"); v && v->is_int64()) record.version = v->as_int64();
  record.case_id = TextAt(&json, "case");
  record.repeat = IntAt(&json, "repeat").value_or(0);
  record.record_schema = static_cast<int>(IntAt(&json, "record_schema").value_or(1));
  record.input = ValueMember(json, "input");
  if (const json::array* tags = ArrayAt(&json, "tags")) record.tags = *tags;
  if (const json::object* human = ObjectAt(&json, "human")) record.human = *human;
  record.rejudged_from = TextAt(&json, "rejudged_from");
  record.result = ObjectMember(json, "result");
  record.error = ObjectMember(json, "error");
  ReadGates(json, record);
  record.duration_ms = IntAt(&json, "duration_ms");
  for (const auto& [key, value] : json) {
    if (std::find(std::begin(kKnown), std::end(kKnown), std::string_view(key)) == std::end(kKnown)) {
      record.other[key] = value;
    }
  }
  return record;
}

json::object CaseRecord::ToJson() const {
  json::object out{{"skill", skill}, {"case", case_id}};
  if (version) out["version"] = *version;
  if (repeat > 0) out["repeat"] = repeat;
  out["record_schema"] = record_schema;
  if (input) out["input"] = *input;
  if (!tags.empty()) out["tags"] = tags;
  if (!human.empty()) out["human"] = human;
  if (!rejudged_from.empty()) out["rejudged_from"] = rejudged_from;
  if (error) out["error"] = *error;
  if (result) out["result"] = *result;
  WriteGates(*this, out);
  if (duration_ms) out["duration_ms"] = *duration_ms;
  for (const auto& [key, value] : other) out[key] = value;
  return out;
}

CaseOutcome CaseRecord::Outcome() const { return OutcomeOf(ToJson()); }

std::string CaseRecord::Label() const { return version ? skill + "@" + std::to_string(*version) : skill; }

std::string CaseRecord::Key() const {
  return Label() + "/" + case_id + (repeat > 0 ? "#" + std::to_string(repeat) : std::string());
}

const json::value* CaseRecord::Output() const { return result ? result->if_contains("output") : nullptr; }

const json::value& CaseRecord::MetricsValue() const {
  static const json::value kNone;
  const json::value* metrics = result ? result->if_contains("metrics") : nullptr;
  return metrics ? *metrics : kNone;
}

std::string_view CaseRecord::ErrorCode() const { return error ? TextAt(&*error, "code") : std::string_view(); }

std::vector<GateFailure> CaseRecord::FailedGates() const {
  std::vector<GateFailure> failed;
  const std::string_view code = ErrorCode();
  const std::string message = error ? std::string(TextAt(&*error, "message")) : std::string();
  if (code == "MAX_RETRIES_EXCEEDED" || code == "TRUNCATED") {
    std::vector<std::string> lines{message.empty() ? std::string(code) : message};
    for (std::string& line : ErrorLines(ArrayAt(&*error, "errors"))) lines.push_back(std::move(line));
    failed.push_back(Failure(Gate::kSchema, std::move(lines)));
  }
  if (expected_match == false) {
    std::vector<std::string> lines;
    for (const auto& m : expected_mismatches) {
      lines.push_back("expected " + (m.path.empty() ? std::string("(root)") : m.path) + ": " + m.message);
    }
    if (lines.empty()) lines.push_back("expected value did not match");
    failed.push_back(Failure(Gate::kExpected, std::move(lines)));
  }
  if (check_pass == false) {
    std::vector<std::string> lines;
    for (const CheckResult& check : checks) {
      if (!check.pass) lines.push_back(CheckLine(check));
    }
    if (lines.empty()) lines.push_back("a check failed");
    failed.push_back(Failure(Gate::kCheck, std::move(lines)));
  }
  if (const json::value* pass = review ? review->if_contains("pass") : nullptr;
      pass && pass->is_bool() && !pass->as_bool()) {
    std::vector<std::string> lines = ReviewLines(*review);
    if (lines.empty()) lines.push_back("review failed");
    failed.push_back(Failure(Gate::kReview, std::move(lines)));
  }
  if (code == "REFUSED" || code == "CONTENT_FILTERED") {
    failed.push_back(GateFailure{Gate::kRefusal,
                                 message.empty() ? std::string(code) : message,
                                 {message.empty() ? std::string(code) : message}});
  }
  return failed;
}

}  // namespace skillrunner::eval
