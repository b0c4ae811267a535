#pragma once

// The stable slug of every problem a check of a tree can raise (validate,
// serve, run, eval all load through the same checks). A diagnostic carries
// its slug as `code`; `validate --json` prints it; a warning's slug can be
// acknowledged by a skill's `lint: {allow: [...]}` or `validate --allow`.
// docs/reference.md's "Lint codes" table is generated from this list.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/tree/diagnostic.h"

namespace skillrunner {

struct LintCode {
  std::string_view slug;
  Diagnostic::Severity severity;
  std::string_view meaning;
};

// Every slug, in the order the docs list them.
std::span<const LintCode> LintCodes();

// The entry for `slug`, or null.
const LintCode* FindLintCode(std::string_view slug);

// Why `slug` cannot be acknowledged ("" when it can: a warning's slug):
// `"foo" is not a lint code (did you mean "bar"?)` or `"keyword-typo" is an
// error's code; only warnings can be allowed`.
std::string AllowProblem(std::string_view slug);

// The Markdown section of docs/reference.md that lists the codes.
std::string LintCodesMarkdown();

// Marks each warning in `diagnostics` from index `from` on whose code is in
// `allow` as acknowledged.
void Acknowledge(std::vector<Diagnostic>& diagnostics, std::size_t from, const std::vector<std::string>& allow);

}  // namespace skillrunner
