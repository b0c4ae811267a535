#pragma once

// `skillrunner import openai-evals EVAL.json [--data ITEMS.jsonl]`
// (docs/migrate.md): an OpenAI eval object, as the Evals API returns it
// (data_source_config.schema) or as a create request writes it
// (data_source_config.item_schema), and its items ({"item": {...}} lines), as
// one skill with its cases:
//   the item schema                      -> the input schema; {{item.x}} -> {{input.x}}
//   {{sample.output_text}}               -> the output's /answer
//   string_check (eq, ne, like, ilike)   -> checks (equals, negated equals, contains, icontains)
//   text_similarity with fuzzy_match     -> a fuzzy check at pass_threshold
//   label_model, score_model             -> rubric criteria
//   python                               -> an exec_check running the grader's grade(sample, item)
// Everything else is reported. An eval object holds no generation prompt (a
// run's input_messages do): the skill gets one that shows the input, and the
// report says so.

#include <filesystem>

#include "runner/importer/imported_tree.h"
#include "services/common/error.h"

namespace skillrunner::importer {

// `data`: the items file; empty for none (the cases are then left to write).
Result<ImportedTree> ImportOpenAiEval(const std::filesystem::path& eval, const std::filesystem::path& data);

}  // namespace skillrunner::importer
