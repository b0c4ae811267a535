#pragma once

// `skillrunner import promptfoo CONFIG.yaml` (docs/migrate.md): a promptfoo
// config's prompts, providers, tests and assertions as a skillrunner tree.
//   prompts (inline, file:// text or chat JSON)  -> skills, {{var}} -> {{input.var}}
//   providers (openai:, anthropic:, google:/vertex:, ollama:) -> the models table
//   tests (inline, file:// CSV/JSON/JSONL/YAML; defaultTest merged) -> cases,
//     the input schema inferred from their vars
//   is-json with a schema -> the output schema (else {"answer": string}, and the
//     text assertions read /answer)
//   equals, contains, icontains, contains-any, contains-all, starts-with, regex
//     and their not- forms, cost, latency -> the cases' checks
//   llm-rubric, model-graded-closedqa, factuality, g-eval -> rubric criteria
// Everything else (javascript, python, webhook, similar, ...) is reported.

#include <filesystem>

#include "runner/importer/imported_tree.h"
#include "services/common/error.h"

namespace skillrunner::importer {

// Reads CONFIG (and the files it names, relative to its folder). A config
// that cannot be read or is not a promptfoo config is CONFIG_INVALID naming
// the file (and line:col for YAML); what it holds that has no home is in the
// tree's not_carried.
Result<ImportedTree> ImportPromptfoo(const std::filesystem::path& config);

}  // namespace skillrunner::importer
