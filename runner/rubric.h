#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "services/validation/compiled_schema.h"

namespace skillrunner {

struct Criterion {
  std::string id;
  std::string description;
  bool required = false;
  std::string guidance;
  boost::json::array examples;
};

// What a judge of a rubric must answer and is told, prepared once at load
// (review::PrepareJudge) so that no review rebuilds or recompiles it.
struct RubricJudge {
  boost::json::value verdict_schema;
  std::string verdict_schema_text;  // compact JSON, for prompts
  std::shared_ptr<const validation::CompiledSchema> compiled;
  std::string system_prompt;
  // The verdict schema transformed for each provider's strict mode; null when
  // that strict mode cannot take it (the judge then uses the validation loop).
  boost::json::value openai_wire;
  boost::json::value anthropic_wire;
};

// A checked rubric (DESIGN §4). Immutable once loaded.
struct Rubric {
  std::string id;
  std::string description;
  std::vector<Criterion> criteria;
  double indeterminate_below_confidence = 50;
  // "all" or "required"; empty means the DESIGN default: the required
  // criteria when any is marked required, else all of them.
  std::string pass_rule;
  std::filesystem::path file;
  std::shared_ptr<const RubricJudge> judge;  // never null in a loaded registry
};

}  // namespace skillrunner
