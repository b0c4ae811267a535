#include "runner/tree/lint_codes.h"

#include <algorithm>

#include "services/common/text.h"

namespace skillrunner {
namespace {

using enum Diagnostic::Severity;

// Append only: a slug, once shipped, keeps its meaning (teams allow them).
constexpr LintCode kCodes[] = {
    {"file-unreadable", kError,
     "A file or folder cannot be read: missing, not a regular file, over 16 "
     "MiB."},
    {"yaml-syntax", kError, "A YAML syntax error."},
    {"unknown-key", kError,
     "A key the file's schema does not declare (with the closest declared "
     "key)."},
    {"invalid-value", kError,
     "A value the file's schema refuses: a wrong type, out of range, a "
     "required key missing."},
    {"skill-invalid", kError,
     "A descriptor the loader refuses: a key the skill's kind needs or "
     "refuses, a validator, review gate, "
     "fault script or structured_output that cannot work."},
    {"rubric-invalid", kError,
     "A rubric the loader refuses: a duplicate criterion id, a pass_rule that "
     "does not parse."},
    {"config-invalid", kError,
     "A skillrunner.yaml setting the loader refuses: a provider, a Redis URL, "
     "a route."},
    {"config-empty", kWarning,
     "A skillrunner.yaml that is empty or holds only comments: the built-in "
     "defaults apply, as with no file (only the simulated provider)."},
    {"duplicate-id", kError, "Two skills or two rubrics with one id."},
    {"candidate-invalid", kError,
     "A rollout's candidate that is not its skill one version on: another id, a version not higher, other "
     "schemas, a rollout of its own, a file that is missing."},
    {"rollout-one-sided", kWarning,
     "A rollout measuring review_pass from review gates (no rollout.review) where only one version has a gate: "
     "the other is never judged, so the rollout cannot step up."},
    {"reference-unknown", kError,
     "A rubric, review skill or handler named that does not exist or did not "
     "load."},
    {"model-unknown", kError, "A model not in the models table, with no default_provider to run it on."},
    {"model-unlisted", kWarning, "A model not in the models table; it runs on the default_provider."},
    {"placeholder-syntax", kError, "A prompt's `{{ ... }}` that is not a placeholder, or an unclosed `{{`."},
    {"placeholder-unknown", kError,
     "A placeholder naming a property the input schema does not declare (with "
     "the closest one)."},
    {"schema-invalid", kError,
     "An input or output schema that is not a valid JSON Schema of its draft, "
     "or a "
     "schema file that cannot be loaded."},
    {"keyword-typo", kError,
     "A schema key within 2 edits (a swap of two letters counts one) of a JSON "
     "Schema keyword of 5 or more "
     "letters, e.g. `requried`: as written it constrains nothing. `example`, "
     "`examples` and `x-` keys are "
     "exempt."},
    {"unknown-keyword", kWarning, "Any other schema key that is not a keyword of the schema's draft."},
    {"unknown-format", kError,
     "A `format` outside the schema draft's list (and `uuid`, `duration`), "
     "with the closest known format."},
    {"format-unchecked", kWarning,
     "A `format` of the draft that no validator here checks (e.g. `iri`, "
     "`uri-reference`): any string passes."},
    {"required-undeclared", kWarning,
     "`required` names a property that a closed object (`additionalProperties: "
     "false`) does not declare, so no "
     "value can match."},
    {"strict-unsupported", kError,
     "The provider's strict mode cannot take the output schema (set "
     "`structured_output: none` to use the validation loop)."},
    {"strict-unenforced", kWarning,
     "A constraint the provider's strict mode does not take: only "
     "skillrunner's own validation of the answer "
     "enforces it (an answer that breaks it is retried)."},
    {"fallback-unstrict", kWarning,
     "A fallback or escalation model whose strict mode cannot take the schema; "
     "it runs the validation loop."},
    {"allow-unknown", kError,
     "`lint.allow` or `validate --allow` names something that is not a "
     "warning's code."},
    {"breaking-change", kError,
     "On reload, and in `validate` against a git ref (`--against`, default HEAD): a skill's schemas changed in a way "
     "that breaks its callers (an input member now "
     "required, an input type or enum narrowed, an output member gone or no longer required, an output "
     "type or enum widened) and its `version` did not rise."},
    {"underpowered-gate", kWarning,
     "An eval suite's skill with max_regression and too few paired cases (dataset cases x repeats) for it ever to "
     "fire at the suite's regression_alpha: even every case flipping one way gives McNemar p >= alpha (fewer than 6 "
     "at 0.05, 8 at 0.01). A suite acknowledges it with `lint: { allow: [underpowered-gate] }`."},
};

}  // namespace

std::span<const LintCode> LintCodes() { return kCodes; }

const LintCode* FindLintCode(std::string_view slug) {
  for (const LintCode& code : kCodes) {
    if (code.slug == slug) return &code;
  }
  return nullptr;
}

std::string AllowProblem(std::string_view slug) {
  const LintCode* code = FindLintCode(slug);
  if (code == nullptr) {
    std::vector<std::string> warnings;
    for (const LintCode& c : kCodes) {
      if (c.severity == kWarning) warnings.emplace_back(c.slug);
    }
    return "\"" + std::string(slug) + "\" is not a lint code" + DidYouMean(ClosestNames(slug, warnings, 1));
  }
  if (code->severity == kError) {
    return "\"" + std::string(slug) + "\" is an error's code; only warnings can be allowed";
  }
  return {};
}

std::string LintCodesMarkdown() {
  std::string out =
      "\n## Lint codes\n\n"
      "Every problem `skillrunner validate` (and every command "
      "that loads the tree) reports carries one of these\n"
      "codes: `validate --json` gives it as `code`, and a "
      "warning is printed with it in brackets. A warning can be\n"
      "acknowledged in a skill (`lint: { allow: [CODE] }`) or "
      "for a whole check (`validate --allow CODE`);\n"
      "`validate --strict` then fails only on the warnings left. "
      "Errors cannot be allowed.\n\n"
      "| code | severity | what it means |\n|---|---|---|\n";
  for (const LintCode& code : kCodes) {
    out += "| `" + std::string(code.slug) + "` | " + (code.severity == kError ? "error" : "warning") + " | " +
           std::string(code.meaning) + " |\n";
  }
  return out;
}

void Acknowledge(std::vector<Diagnostic>& diagnostics, std::size_t from, const std::vector<std::string>& allow) {
  for (std::size_t i = from; i < diagnostics.size(); ++i) {
    Diagnostic& d = diagnostics[i];
    if (d.severity == kWarning && std::find(allow.begin(), allow.end(), d.code) != allow.end()) d.acknowledged = true;
  }
}

}  // namespace skillrunner
