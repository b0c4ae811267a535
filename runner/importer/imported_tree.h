#pragma once

// What `skillrunner import` makes of another tool's suite (docs/migrate.md):
// a tree of skills, datasets, rubrics, an eval suite and a config, and the
// list of what it could not carry over. Each importer (promptfoo.h,
// openai_evals.h) fills one; WriteTree puts it on disk with its report.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::importer {

// One thing the importer could not carry over: its kind ("assertion javascript",
// "provider bedrock:...", "nunjucks {% if %}"), where it was ("tests[3].assert[1]"),
// and what was done instead, if anything.
struct NotCarried {
  std::string kind;
  std::string where;
  std::string instead;
};

struct ImportedTree {
  std::string name;            // the suite's id, and the default folder (./NAME)
  std::string source;          // what it came from, for the report ("promptfoo config promptfooconfig.yaml")
  boost::json::object config;  // skillrunner.yaml
  std::map<std::string, boost::json::object> skills;              // id -> skills/ID/skill.yaml
  std::map<std::string, std::vector<boost::json::object>> cases;  // skill id -> skills/ID/cases.jsonl
  std::map<std::string, boost::json::object> rubrics;             // id -> rubrics/ID.yaml
  std::map<std::string, std::string> files;                       // more files: path in the tree -> content
  boost::json::object suite;                                      // evals/NAME.yaml
  std::vector<NotCarried> not_carried;
  std::size_t carried_assertions = 0;  // assertions that became checks or criteria

  void Report(std::string kind, std::string where, std::string instead = "") {
    not_carried.push_back({std::move(kind), std::move(where), std::move(instead)});
  }
};

// An id the skill and rubric schemas take ([a-z0-9_.-]+, 128 at most) made
// from any text: lower case, every other run of characters one "_"; "imported"
// when nothing is left.
std::string MakeId(std::string_view text);

// A JSON value as block YAML (yaml-cpp's emitter): strings quoted where YAML
// would read them as another type.
std::string ToYaml(const boost::json::value& value);

// import-report.md: what was imported, then what was not, by kind with counts,
// then each place.
std::string ReportMarkdown(const ImportedTree& tree);

// Writes the tree into `dir` (made when missing): skillrunner.yaml,
// skills/ID/skill.yaml and cases.jsonl, rubrics/ID.yaml, evals/NAME.yaml, the
// extra files and import-report.md. A folder that exists and is not empty is
// refused unless `force` (then the files are written over, nothing removed).
Result<void> WriteTree(const ImportedTree& tree, const std::filesystem::path& dir, bool force);

}  // namespace skillrunner::importer
