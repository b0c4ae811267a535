#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "services/generation/generation_spec.h"

namespace skillrunner::review {

struct Criterion {
  std::string id;
  std::string description;
  bool required = false;
  std::string guidance;
  boost::json::array examples;
};

// What a judge of a rubric must answer and is told, prepared once at load
// (PrepareJudge) so that no review rebuilds or recompiles it.
struct RubricJudge {
  std::string system_prompt;
  // The verdict schema with no strict copy (the validation loop, JSON mode,
  // and providers that take the schema as written), and with the strict copy
  // of each provider's strict mode (null there when that mode cannot take it:
  // the judge then uses the validation loop).
  std::shared_ptr<const generation::AnswerSchema> plain;
  std::shared_ptr<const generation::AnswerSchema> openai;
  std::shared_ptr<const generation::AnswerSchema> anthropic;
  std::shared_ptr<const generation::AnswerSchema> gemini;
};

// A checked rubric (design.md §4). Immutable once loaded.
struct Rubric {
  std::string id;
  std::string description;
  std::vector<Criterion> criteria;
  double indeterminate_below_confidence = 50;
  // "all" or "required"; empty means the design.md §4 default: the required
  // criteria when any is marked required, else all of them.
  std::string pass_rule;
  std::filesystem::path file;
  std::shared_ptr<const RubricJudge> judge;  // never null in a loaded registry
};

}  // namespace skillrunner::review
