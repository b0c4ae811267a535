// The checks of a dataset's cases against their skill (suite.h): the ones an
// eval makes at load, and `validate` makes for every dataset it finds.
#include <algorithm>
#include <set>

#include "runner/eval/suite.h"
#include "services/common/json_pointer.h"
#include "services/common/json_text.h"
#include "services/common/text.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

// An error of `expected` that a subset may have: members and items left out (a subset's array
// lists some elements of the answer's), or an undeclared key (CheckExpected says so, with a hint).
bool LeftOutBySubset(std::string_view message) {
  if (message.starts_with("required property is missing") || message.starts_with("unexpected property")) return true;
  return message.starts_with("expected at least ") &&
         (message.find(" item") != std::string_view::npos || message.find(" propert") != std::string_view::npos);
}

// Every object key of `expected` must be a property the output schema
// declares where it stands (a misspelt pointer would never match).
template <typename Place>
void CheckExpected(const json::value& schema, const json::value& expected, const std::string& pointer, Place& place,
                   int depth = 0) {
  const json::object* object = expected.if_object();
  const json::object* s = schema.if_object();
  if (object == nullptr || s == nullptr || depth > 32) return;
  const json::value* props = s->if_contains("properties");
  if (props == nullptr || !props->is_object()) return;
  std::vector<std::string> names;
  for (const auto& [name, unused] : props->as_object()) names.emplace_back(name);
  for (const auto& [key, value] : *object) {
    std::string at = AppendPointer(pointer, key);
    const json::value* declared = props->as_object().if_contains(key);
    if (declared == nullptr) {
      place(at, "the output_schema declares no property \"" + std::string(key) + "\"" +
                    DidYouMean(ClosestNames(key, names)) + ", so no output can match it");
      continue;
    }
    CheckExpected(*declared, value, at, place, depth + 1);
  }
}

}  // namespace

void CheckDatasetCases(const Skill& skill, ExpectedMode expected, const std::filesystem::path& cases_file,
                       const std::vector<EvalCase>& cases, std::vector<Diagnostic>& found) {
  const std::string file = cases_file.string();
  for (const EvalCase& c : cases) {
    auto place = [&](const std::string& pointer, const std::string& message) {
      found.push_back(Diagnostic{file, {c.line, 1}, "case \"" + c.id + "\": " + pointer + ": " + message});
    };
    if (skill.input_schema) {
      for (const auto& e : skill.input_schema->Validate(c.input)) place("/input" + e.path, e.message);
    }
    if (!c.expected || expected == ExpectedMode::kNone || !skill.output_schema_json.is_object()) continue;
    const bool subset = expected == ExpectedMode::kSubset;
    if (subset) CheckExpected(skill.output_schema_json, *c.expected, "/expected", place);
    if (!skill.output_schema) continue;
    for (const auto& e : skill.output_schema->Validate(*c.expected)) {
      if (!subset || !LeftOutBySubset(e.message)) place("/expected" + e.path, e.message);
    }
  }
}

std::vector<Diagnostic> CheckSkillDatasets(const SkillRegistry& registry) {
  std::vector<Diagnostic> found;
  for (const auto& skill : registry.skills()) {
    const std::filesystem::path file = skill->dir / "cases.jsonl";
    std::error_code ec;
    if (skill->dir.empty() || !std::filesystem::is_regular_file(file, ec)) continue;
    LoadedDataset dataset = LoadDataset(file);
    std::vector<Diagnostic> problems = std::move(dataset.problems);
    if (!dataset.readable) problems.push_back(Diagnostic{file.string(), {0, 0}, "cannot read the dataset"});
    CheckDatasetCases(*skill, ExpectedMode::kNone, file, dataset.cases, problems);
    std::stable_sort(problems.begin(), problems.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.position.line < b.position.line; });
    for (auto& d : problems) found.push_back(std::move(d));
  }
  return found;
}

}  // namespace skillrunner::eval
