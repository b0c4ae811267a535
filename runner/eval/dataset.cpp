#include "runner/eval/dataset.h"

#include <boost/json/parse.hpp>
#include <fstream>
#include <map>

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

constexpr std::string_view kAllowedKeys[] = {"id",     "input",      "expected",  "tags",    "human",
                                             "checks", "exec_check", "reference", "criteria"};
constexpr std::string_view kKeysSaid = "id, input, expected, tags, human, checks, exec_check, reference, criteria";

// A case's own criteria: [{"id", "description", "required"?}], ids unique; the problem, or "".
std::string ParseCriteria(const json::value& value, std::vector<CaseCriterion>& out) {
  const std::string shape = "/criteria: must be an array of {\"id\", \"description\", \"required\"?}";
  if (!value.is_array()) return shape;
  for (std::size_t i = 0; i < value.as_array().size(); ++i) {
    const std::string at = "/criteria/" + std::to_string(i);
    const json::object* c = value.as_array()[i].if_object();
    if (c == nullptr) return shape;
    for (const auto& [key, unused] : *c) {
      if (key != "id" && key != "description" && key != "required") {
        return at + ": unexpected key \"" + std::string(key) + "\" (a criterion has id, description, required)";
      }
    }
    const json::value* id = c->if_contains("id");
    const json::value* description = c->if_contains("description");
    const json::value* required = c->if_contains("required");
    if (!id || !id->is_string() || id->as_string().empty()) return at + "/id: must be a non-empty string";
    if (!description || !description->is_string() || description->as_string().empty()) {
      return at + "/description: must be a non-empty string";
    }
    if (required && !required->is_bool()) return at + "/required: must be true or false";
    for (const CaseCriterion& seen : out) {
      if (seen.id == id->as_string()) return at + "/id: \"" + seen.id + "\" is listed twice";
    }
    out.push_back(CaseCriterion{std::string(id->as_string()), std::string(description->as_string()),
                                required && required->as_bool()});
  }
  return {};
}

// The case's own assertions and reference (case_checks.h).
std::string CheckAssertions(const json::object& obj, const std::filesystem::path& dir, EvalCase& out) {
  std::string problem;
  if (const json::value* checks = obj.if_contains("checks")) problem = ParseChecks(*checks, out.checks);
  if (const json::value* exec = obj.if_contains("exec_check"); exec && problem.empty()) {
    problem = ParseExecCheck(*exec, dir, out.exec_check.emplace());
  }
  if (!problem.empty()) return "case \"" + out.id + "\": " + problem;
  if (const json::value* reference = obj.if_contains("reference")) out.reference = *reference;
  if (const json::value* criteria = obj.if_contains("criteria")) {
    if (std::string why = ParseCriteria(*criteria, out.criteria); !why.empty())
      return "case \"" + out.id + "\": " + why;
  }
  return {};
}

// Checks one parsed line; returns the problem, or an empty string.
std::string CheckCase(const json::value& value, const std::filesystem::path& dir, EvalCase& out) {
  if (!value.is_object()) return "a case must be a JSON object (" + std::string(kKeysSaid) + ")";
  const json::object& obj = value.as_object();
  for (const auto& [key, unused] : obj) {
    bool known = false;
    for (auto allowed : kAllowedKeys) known = known || key == allowed;
    if (!known) return "unexpected key \"" + std::string(key) + "\" (a case has " + std::string(kKeysSaid) + ")";
  }
  const json::value* id = obj.if_contains("id");
  if (!id) return "missing key \"id\"";
  if (!id->is_string() || id->as_string().empty()) return "\"id\" must be a non-empty string";
  out.id = std::string(id->as_string());
  const json::value* input = obj.if_contains("input");
  if (!input) return "case \"" + out.id + "\": missing key \"input\"";
  out.input = *input;
  if (const json::value* expected = obj.if_contains("expected")) out.expected = *expected;
  if (const json::value* tags = obj.if_contains("tags")) {
    if (!tags->is_array()) return "case \"" + out.id + "\": \"tags\" must be an array of strings";
    for (const auto& tag : tags->as_array()) {
      if (!tag.is_string()) return "case \"" + out.id + "\": \"tags\" must be an array of strings";
    }
    out.tags = tags->as_array();
  }
  if (const json::value* human = obj.if_contains("human")) {
    const std::string expected =
        "case \"" + out.id + "\": \"human\" must be an object of criterion ids to \"pass\" or \"fail\"";
    if (!human->is_object()) return expected;
    for (const auto& [criterion, verdict] : human->as_object()) {
      if (!verdict.is_string() || (verdict.as_string() != "pass" && verdict.as_string() != "fail")) {
        return "case \"" + out.id + "\": human[\"" + std::string(criterion) + "\"] must be \"pass\" or \"fail\"";
      }
    }
    out.human = human->as_object();
  }
  return CheckAssertions(obj, dir, out);
}

}  // namespace

LoadedDataset LoadDataset(const std::filesystem::path& file) {
  LoadedDataset out;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    out.readable = false;
    return out;
  }
  std::vector<EvalCase>& cases = out.cases;
  std::vector<Diagnostic>& problems = out.problems;
  std::map<std::string, int> first_line;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 256;
    json::value value = json::parse(text, ec, {}, options);
    EvalCase c;
    c.line = line;
    std::string problem = ec ? "not valid JSON: " + ec.message() : CheckCase(value, file.parent_path(), c);
    if (problem.empty()) {
      auto [it, inserted] = first_line.emplace(c.id, line);
      if (!inserted) {
        problem = "duplicate case id \"" + c.id + "\" (first used on line " + std::to_string(it->second) + ")";
      }
    }
    if (!problem.empty()) {
      problems.push_back(Diagnostic{file.string(), {line, 1}, std::move(problem)});
      continue;
    }
    cases.push_back(std::move(c));
  }
  if (cases.empty() && problems.empty()) problems.push_back(Diagnostic{file.string(), {}, "the dataset has no cases"});
  return out;
}

}  // namespace skillrunner::eval
