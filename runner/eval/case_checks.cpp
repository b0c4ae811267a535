#include "runner/eval/case_checks.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <cstdio>

#include "runner/eval/expected_match.h"
#include "runner/eval/records/case_record.h"
#include "services/common/regex_guard.h"
#include "services/handler/exec_handler.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

// A value as a message shows it: a number as people write it ("0.25", "4e-05", "3"), anything
// else as its JSON.
std::string Shown(const json::value& value) {
  if (!value.is_number()) return json::serialize(value);
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value.to_number<double>());
  return text;
}

struct OpName {
  CheckOp op;
  std::string_view name;
};
constexpr OpName kOps[] = {{CheckOp::kEquals, "equals"},
                           {CheckOp::kContains, "contains"},
                           {CheckOp::kIcontains, "icontains"},
                           {CheckOp::kContainsAny, "contains_any"},
                           {CheckOp::kContainsAll, "contains_all"},
                           {CheckOp::kStartsWith, "starts_with"},
                           {CheckOp::kRegex, "regex"},
                           {CheckOp::kFuzzy, "fuzzy"},
                           {CheckOp::kLte, "lte"}};
constexpr std::string_view kCheckKeys[] = {"pointer", "op", "value", "negate", "threshold"};

bool IsPointer(std::string_view p) { return p.empty() || p.front() == '/'; }

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The text a string op reads: a string as it is, anything else as its JSON.
std::string TextOf(const json::value& value) {
  return value.is_string() ? std::string(value.as_string()) : json::serialize(value);
}

// What each op needs of `value`; an empty string when it has it.
std::string CheckValue(const CaseCheck& check) {
  const json::value& v = check.value;
  switch (check.op) {
    case CheckOp::kEquals:
      return {};
    case CheckOp::kContainsAny:
    case CheckOp::kContainsAll:
      if (!v.is_array() || v.as_array().empty()) return "must be a non-empty array";
      return {};
    case CheckOp::kLte:
      return v.is_number() ? std::string() : "must be a number";
    case CheckOp::kContains:
      return v.is_string() || v.is_number() || v.is_bool() ? std::string() : "must be a string";
    default:
      return v.is_string() ? std::string() : "must be a string";
  }
}

std::string ParseCheck(const json::value& item, const std::string& at, CaseCheck& check) {
  if (!item.is_object()) return at + ": a check must be an object {pointer, op, value, negate?}";
  const json::object& obj = item.as_object();
  for (const auto& [key, unused] : obj) {
    if (std::find(std::begin(kCheckKeys), std::end(kCheckKeys), key) == std::end(kCheckKeys)) {
      return at + ": unexpected key \"" + std::string(key) + "\" (a check has pointer, op, value, negate, threshold)";
    }
  }
  const json::value* pointer = obj.if_contains("pointer");
  if (!pointer || !pointer->is_string() || !IsPointer(pointer->as_string())) {
    return at + "/pointer: must be a JSON pointer (\"\" for the whole output, \"/answer\", \"/metrics/cost_usd\")";
  }
  check.pointer = std::string(pointer->as_string());
  const json::value* op = obj.if_contains("op");
  const OpName* found = nullptr;
  for (const auto& entry : kOps) {
    if (op && op->is_string() && op->as_string() == entry.name) found = &entry;
  }
  if (!found) {
    return at + "/op: must be one of equals, contains, icontains, contains_any, contains_all, starts_with, regex, " +
           "fuzzy, lte";
  }
  check.op = found->op;
  const json::value* value = obj.if_contains("value");
  if (!value) return at + ": missing key \"value\"";
  check.value = *value;
  if (std::string problem = CheckValue(check); !problem.empty()) return at + "/value: " + problem;
  if (const json::value* negate = obj.if_contains("negate")) {
    if (!negate->is_bool()) return at + "/negate: must be true or false";
    check.negate = negate->as_bool();
  }
  if (const json::value* threshold = obj.if_contains("threshold")) {
    if (!threshold->is_number() || threshold->to_number<double>() < 0 || threshold->to_number<double>() > 1) {
      return at + "/threshold: must be a number from 0 to 1";
    }
    check.threshold = threshold->to_number<double>();
  }
  if (check.op == CheckOp::kRegex) {
    auto compiled = CompileSchemaRegex(check.value.as_string());
    if (!compiled) return at + "/value: not a regular expression this program can compile (ECMAScript)";
    check.regex = std::make_shared<const std::regex>(std::move(*compiled));
  }
  return {};
}

bool Contains(const json::value& target, const json::value& needle, bool fold) {
  if (target.is_array()) {
    const json::array& items = target.as_array();
    return std::any_of(items.begin(), items.end(), [&](const json::value& item) {
      return item == needle || (fold && item.is_string() && Lower(TextOf(item)) == Lower(TextOf(needle)));
    });
  }
  std::string text = TextOf(target), part = TextOf(needle);
  if (fold) return Lower(text).find(Lower(part)) != std::string::npos;
  return text.find(part) != std::string::npos;
}

// Whether `target` passes the op (before negate), and why not when it does not.
bool Holds(const CaseCheck& check, const json::value& target, std::string& why) {
  const json::value& v = check.value;
  switch (check.op) {
    case CheckOp::kEquals:
      why = "is " + json::serialize(target) + ", not " + json::serialize(v);
      return CompareExpected(ExpectedMode::kExact, v, target).empty();
    case CheckOp::kContains:
    case CheckOp::kIcontains:
      why = "does not contain " + json::serialize(v);
      return Contains(target, v, check.op == CheckOp::kIcontains);
    case CheckOp::kContainsAny: {
      why = "contains none of " + json::serialize(v);
      const json::array& all = v.as_array();
      return std::any_of(all.begin(), all.end(), [&](const json::value& n) { return Contains(target, n, false); });
    }
    case CheckOp::kContainsAll: {
      why = "does not contain all of " + json::serialize(v);
      const json::array& all = v.as_array();
      return std::all_of(all.begin(), all.end(), [&](const json::value& n) { return Contains(target, n, false); });
    }
    case CheckOp::kStartsWith:
      why = "does not start with " + json::serialize(v);
      return TextOf(target).starts_with(v.as_string());
    case CheckOp::kRegex:
      why = "does not match " + json::serialize(v);
      return std::regex_search(TextOf(target), *check.regex);
    case CheckOp::kFuzzy: {
      const double ratio = FuzzyRatio(TextOf(target), v.as_string());
      why = "is " + std::to_string(ratio).substr(0, 5) + " similar to " + json::serialize(v) + ", under " +
            std::to_string(check.threshold).substr(0, 4);
      return ratio >= check.threshold;
    }
    case CheckOp::kLte:
      why = "is " + Shown(target) + ", over " + Shown(v);
      return target.is_number() && target.to_number<double>() <= v.to_number<double>();
  }
  return false;
}

}  // namespace

std::string_view CheckOpName(CheckOp op) {
  for (const auto& entry : kOps) {
    if (entry.op == op) return entry.name;
  }
  return "equals";
}

std::string ParseChecks(const json::value& value, std::vector<CaseCheck>& out) {
  if (!value.is_array()) return "/checks: must be an array of checks";
  const json::array& items = value.as_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    CaseCheck check;
    if (std::string problem = ParseCheck(items[i], "/checks/" + std::to_string(i), check); !problem.empty()) {
      return problem;
    }
    out.push_back(std::move(check));
  }
  return {};
}

std::string ParseExecCheck(const json::value& value, const std::filesystem::path& dataset_dir, ExecCheck& out) {
  if (!value.is_object()) return "/exec_check: must be an object {argv, pass_threshold?, timeout_ms?}";
  const json::object& obj = value.as_object();
  for (const auto& [key, unused] : obj) {
    if (key != "argv" && key != "pass_threshold" && key != "timeout_ms") {
      return "/exec_check: unexpected key \"" + std::string(key) + "\" (it has argv, pass_threshold, timeout_ms)";
    }
  }
  const json::value* argv = obj.if_contains("argv");
  if (!argv || !argv->is_array() || argv->as_array().empty()) return "/exec_check/argv: must be a non-empty array";
  for (const auto& arg : argv->as_array()) {
    if (!arg.is_string()) return "/exec_check/argv: must be an array of strings";
    out.argv.emplace_back(arg.as_string());
  }
  out.working_dir = dataset_dir;
  if (const json::value* threshold = obj.if_contains("pass_threshold")) {
    if (!threshold->is_number()) return "/exec_check/pass_threshold: must be a number";
    out.pass_threshold = threshold->to_number<double>();
  }
  if (const json::value* timeout = obj.if_contains("timeout_ms")) {
    if (!timeout->is_int64() || timeout->as_int64() < 1 || timeout->as_int64() > 600000) {
      return "/exec_check/timeout_ms: must be a whole number of milliseconds from 1 to 600000";
    }
    out.timeout = std::chrono::milliseconds(timeout->as_int64());
  }
  return {};
}

CheckResult RunCheck(const CaseCheck& check, const json::value& output, const json::value& metrics) {
  CheckResult verdict;
  verdict.pointer = check.pointer;
  verdict.op = CheckOpName(check.op);
  verdict.negate = check.negate;
  verdict.expected = check.value;
  const bool of_metrics = check.pointer.starts_with("/metrics/");
  boost::system::error_code ec;
  const json::value* target =
      of_metrics ? metrics.find_pointer(check.pointer.substr(8), ec) : output.find_pointer(check.pointer, ec);
  if (!target) {
    verdict.message = std::string(of_metrics ? "the record's metrics have" : "the output has") + " no value at " +
                      (check.pointer.empty() ? std::string("\"\"") : check.pointer);
    return verdict;
  }
  verdict.actual = KeptValue(*target);
  std::string why;
  const bool holds = Holds(check, *target, why);
  verdict.pass = holds != check.negate;
  if (!verdict.pass) verdict.message = check.negate ? "passes the check it must fail (negate)" : why;
  return verdict;
}

double FuzzyRatio(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  // The longest common subsequence, one row at a time: Indel distance = |a| + |b| - 2 LCS.
  std::vector<std::size_t> row(b.size() + 1, 0);
  for (char ca : a) {
    std::size_t diagonal = 0;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = ca == b[j - 1] ? diagonal + 1 : std::max(row[j], row[j - 1]);
      diagonal = above;
    }
  }
  const double total = static_cast<double>(a.size() + b.size());
  return 2.0 * static_cast<double>(row[b.size()]) / total;
}

std::string ExecCheckInput(const json::value& output, const json::value& input) {
  json::object sample{{"output_text", TextOf(output)}, {"output_json", output}};
  return json::serialize(json::object{{"sample", std::move(sample)}, {"item", input}});
}

CheckResult ExecVerdict(const handler::ProcessOutcome& outcome, const ExecCheck& check) {
  CheckResult verdict;
  verdict.op = "exec";
  verdict.expected = check.pass_threshold;
  if (outcome.timed_out) {
    verdict.message = "the grader ran past its " + std::to_string(check.timeout.count()) + " ms";
    return verdict;
  }
  if (outcome.signal != 0 || outcome.exit_status != 0) {
    verdict.message = (outcome.signal != 0 ? "the grader was killed by signal " + std::to_string(outcome.signal)
                                           : "the grader exited " + std::to_string(outcome.exit_status)) +
                      (outcome.stderr_tail.empty() ? std::string() : ": " + outcome.stderr_tail);
    return verdict;
  }
  auto parsed = handler::ParseSingleJsonValue(outcome.stdout_data);
  const json::value* score = parsed && parsed->is_number() ? &*parsed : nullptr;
  const json::value* pass = nullptr;
  if (parsed && parsed->is_object()) {
    score = parsed->as_object().if_contains("score");
    pass = parsed->as_object().if_contains("pass");
  }
  if ((score && !score->is_number()) || (pass && !pass->is_bool()) || (!score && !pass)) {
    verdict.message = "the grader must print a number or {\"score\": number} or {\"pass\": boolean}";
    return verdict;
  }
  if (score) {
    verdict.score = score->to_number<double>();
    verdict.actual = *verdict.score;
  }
  verdict.pass = pass ? pass->as_bool() : score->to_number<double>() >= check.pass_threshold;
  if (!verdict.pass) {
    verdict.message =
        pass ? std::string("the grader said it fails")
             : "score " + Shown(*score) + " is under the pass threshold " + Shown(json::value(check.pass_threshold));
  }
  return verdict;
}

}  // namespace skillrunner::eval
