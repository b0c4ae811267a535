#pragma once

// The reference of every key a user writes (skill.yaml, rubrics, eval suites,
// skillrunner.yaml), generated from the JSON Schemas compiled into the
// program, so it is never out of date with what the loader accepts
// (`skillrunner schema --markdown`; docs/reference.md is its output).

#include <string>
#include <vector>

namespace skillrunner {

// Markdown: a section per file, a table row per key (dotted path, what it
// takes, its description).
std::string KeyReferenceMarkdown();

// The keys whose schema has no description ("skill.schema.json: /review/x"),
// which the reference would leave unexplained.
std::vector<std::string> UndescribedKeys();

}  // namespace skillrunner
