#pragma once

// An eval suite (design.md §6.3): which skills to run over which datasets, how
// to judge and check their outputs, and the thresholds that gate the night.
// Loaded and checked once; every problem is "FILE:LINE:COL: message".

#include <boost/json/value.hpp>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/dataset.h"
#include "runner/eval/expected_match.h"
#include "runner/eval/summary.h"
#include "runner/tree/diagnostic.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner::review {
struct JudgeSpec;
}  // namespace skillrunner::review

namespace skillrunner::eval {

// Any limit left unset is not checked. Rates are 0..1.
struct Thresholds {
  std::optional<double> schema_compliance;
  std::optional<double> rubric_pass_rate;
  std::optional<double> expected_match;
  std::optional<double> check_pass_rate;  // of the cases with checks or an exec_check
  std::optional<double> max_regression;
  std::optional<double> criterion_pass_rate;  // every criterion's minimum
  // Most judge errors allowed, as a share of the cases that reached a judge.
  // Unset means 0 wherever a rubric is in play: a judge that broke on any
  // case breaches, unless the suite allows some.
  std::optional<double> max_judge_error_rate;
  // Most judged cases whose pass was indeterminate (left out of
  // rubric_pass_rate), as a share of the judged cases. Unset: not checked.
  std::optional<double> max_indeterminate_rate;
  // Most cases that ended refused (REFUSED or CONTENT_FILTERED), as a share of the cases. Unset: not checked.
  std::optional<double> max_refusal_rate;
  // The skill's cases' cost in USD (a skill entry's own; the suite's applies to the whole run).
  std::optional<double> max_cost_usd;
  std::map<std::string, double> criteria;  // per-criterion minimums (override)

  // `over`'s values where it sets them, else these.
  Thresholds Overlay(const Thresholds& over) const;
};

// Requests and tokens per minute allowed on one provider (by provider name):
// they win over the config's for the run's provider limiters.
using RateLimit = state::RateLimit;

struct SuiteSkill {
  const Skill* skill = nullptr;  // owned by the registry the suite was loaded with (a candidate's own)
  // design.md §11.2: the entry runs a skill's candidate (pinned to this version;
  // `versions: candidate|both`, or `skill: ID@candidate`); unset: its stable version.
  std::optional<int> version;
  // How the run names it: the skill id, "<id>@<version>" for a candidate (its
  // records' "skill" plus their "version"; SkillLabel of case_outcome.h).
  std::string label;
  std::filesystem::path cases_file;
  std::vector<EvalCase> cases;
  std::string rubric;          // empty: outputs are not judged
  std::string judge_model;     // resolved (never empty when rubric is set)
  bool judge_is_gate = false;  // the rubric and model are the skill's own review gate
  // How the eval judges this entry ("<skill>.eval", the rubric, the judge
  // model's provider and mode), prepared at load; a case only sets the seed.
  std::shared_ptr<const skillrunner::review::JudgeSpec> judge;
  // design.md §12.3: the judge of each case that has its own `criteria` (by case id): the rubric with
  // those criteria after its own, on the entry's judge model.
  std::map<std::string, std::shared_ptr<const skillrunner::review::JudgeSpec>, std::less<>> case_judges;
  std::set<std::string> counted_criteria;  // the rubric's criteria that decide a pass
  ExpectedMode expected = ExpectedMode::kNone;
  Thresholds thresholds;  // the suite's, overlaid with the entry's own
  bool batch = true;      // false: online even in batch mode (`batch: false`)
  // design.md §12.3: the suite's `redact:` pointers ("/input/...", "/output/..."), masked in every
  // record this entry writes (CaseRecord::Redact).
  std::vector<std::string> redact;
};

// The suite's `batch:` block (design.md §10.6); its presence turns batch mode on.
struct SuiteBatch {
  std::size_t max_requests = 50'000;
  double send_after_s = 15;
  double poll_interval_s = 30;
  bool fallback_online = false;
};

struct Suite {
  std::string id;
  std::optional<double> max_cost_usd;  // the whole run's (thresholds.max_cost_usd of the suite)
  std::filesystem::path file;
  std::optional<int> concurrency;
  int repeats = 1;
  bool gate_unstable_criteria = false;
  // design.md §9.5: a drop beyond max_regression breaches only when its paired
  // McNemar p is below this.
  double regression_alpha = 0.05;
  // design.md §9.5: criteria whose judge agrees with the cases' human labels
  // less than this (Cohen's kappa) are uncalibrated and left out of gates.
  std::optional<double> min_judge_kappa;
  std::map<std::string, RateLimit, std::less<>> rate_limits;  // by provider name
  std::optional<SuiteBatch> batch;
  std::vector<std::string> redact;  // `redact:` (SuiteSkill::redact)
  std::vector<SuiteSkill> skills;
  // A skill run at both versions: its cases paired between them (summary "versions").
  std::vector<VersionPair> version_pairs;
  std::vector<Diagnostic> warnings;  // e.g. rate limits for providers the config lacks

  std::size_t CaseCount() const;                         // cases x repeats
  const SuiteSkill* Find(std::string_view label) const;  // by SuiteSkill::label
};

// design.md §12.3: each case's input against the skill's input_schema and, under an `expected:`
// mode, its `expected` against the output_schema (under `subset`, the members it gives: none is
// required, and each key must be one the schema declares). "FILE:LINE:1: case \"ID\": POINTER:
// message" into `found`, the messages eval gives before any request is made.
void CheckDatasetCases(const Skill& skill, ExpectedMode expected, const std::filesystem::path& cases_file,
                       const std::vector<EvalCase>& cases, std::vector<Diagnostic>& found);

// What `validate` finds in every skill's own cases.jsonl: lines that are not
// cases, and inputs the skill's input_schema refuses (eval's messages).
std::vector<Diagnostic> CheckSkillDatasets(const SkillRegistry& registry);

// Loads `path`, checks it against suite.schema.json, resolves each skill,
// rubric and judge model against `registry`, and loads every dataset (a path
// relative to the skill folder; default cases.jsonl there). The registry must
// outlive the suite.
std::expected<Suite, std::vector<Diagnostic>> LoadSuite(const std::filesystem::path& path,
                                                        const SkillRegistry& registry);
// The same for `text` already read from `path` (the file it names in
// diagnostics; datasets are still read from the skills' folders).
std::expected<Suite, std::vector<Diagnostic>> LoadSuiteText(const std::filesystem::path& path, std::string_view text,
                                                            const SkillRegistry& registry);

}  // namespace skillrunner::eval
