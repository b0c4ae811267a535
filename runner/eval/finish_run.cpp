#include "runner/eval/finish_run.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>

#include "runner/eval/history/history.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/records/results_log.h"
#include "runner/eval/regression.h"
#include "runner/eval/report/html_report.h"
#include "runner/eval/report/junit_report.h"
#include "runner/eval/thresholds.h"
#include "services/common/json_text.h"

namespace skillrunner::eval {
namespace json = boost::json;

std::string NoBaselineReason(const std::string& suite_id, std::string_view which) {
  if (which == "last-passing") return "the history DB has no earlier run of suite " + suite_id + " whose gates passed";
  if (which == "pinned") {
    return "no run of suite " + suite_id + " is pinned in the history DB (skillrunner eval pin RUN_ID --history FILE)";
  }
  return "the history DB has no earlier run of suite " + suite_id;
}

std::filesystem::path DefaultHistoryFile(const std::filesystem::path& out_dir) {
  std::filesystem::path dir = std::filesystem::absolute(out_dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "out/" -> "out"
  return dir.parent_path() / "eval-history.sqlite";
}

void SortRecords(const Suite& suite, std::vector<json::object>& records) {
  std::map<std::string, std::size_t, std::less<>> skill_order;
  std::map<std::pair<std::string, std::string>, std::size_t> case_order;
  for (std::size_t s = 0; s < suite.skills.size(); ++s) {
    const SuiteSkill& entry = suite.skills[s];
    skill_order[entry.label] = s;
    for (std::size_t c = 0; c < entry.cases.size(); ++c) case_order[{entry.label, entry.cases[c].id}] = c;
  }
  auto rank = [&](const json::object& r) {
    std::string skill = SkillLabel(r);
    std::string id(CaseIdOf(r));
    auto s = skill_order.find(skill);
    auto c = case_order.find({skill, id});
    std::int64_t repeat = RepeatOf(r);
    std::size_t unknown = suite.skills.size() + 1;
    return std::make_tuple(s == skill_order.end() ? unknown : s->second,
                           c == case_order.end() ? std::numeric_limits<std::size_t>::max() : c->second, CaseKey(r),
                           repeat);
  };
  std::stable_sort(records.begin(), records.end(),
                   [&](const json::object& a, const json::object& b) { return rank(a) < rank(b); });
}

namespace {

// --fail-on regressions: threshold breaches are reported, only regressions fail the run.
bool Failing(const RunSummary& summary, const FinishOptions& options) {
  for (const Breach& breach : summary.breaches) {
    if (!options.fail_on_regressions_only || breach.kind == "regression") return true;
  }
  return false;
}

// Batch mode (design.md §10.6): the batches of the run folder's journal and the
// requests resubmitted because a batch left them unanswered.
void AddBatchFacts(RunSummary& summary, const std::filesystem::path& journal) {
  std::ifstream in(journal);
  if (!in) return;
  std::int64_t batches = 0;
  std::int64_t resubmitted = 0;
  for (std::string line; std::getline(in, line);) {
    batches += line.starts_with(R"({"event":"batch",)") ? 1 : 0;
    resubmitted += line.starts_with(R"({"event":"resubmitted",)") ? 1 : 0;
  }
  summary.batches = batches;
  summary.resubmitted = resubmitted;
  // The run's, beside each skill's in "skills" (none: no model had a price).
  summary.batch_cost_usd = summary.totals.batch_cost_usd;
  summary.online_cost_usd = summary.totals.online_cost_usd;
}

// What the summary says about how the run was made: --fail-on, the cache's
// hits, and where its records are (--rejudge-from RUN_ID finds them by it).
void AddRunFacts(RunSummary& summary, const FinishOptions& options) {
  summary.fail_on = options.fail_on_regressions_only ? "regressions" : "any";
  if (options.cache) {
    summary.cache = CacheFacts{options.cache->file().string(), std::string(CacheModeName(options.cache->mode())),
                               static_cast<std::int64_t>(options.cache->hits()),
                               static_cast<std::int64_t>(options.cache->misses())};
  }
  summary.out = std::filesystem::absolute(options.out_dir).lexically_normal().string();
  AddBatchFacts(summary, options.out_dir / "batches.jsonl");
}

// design.md §12.3: the regression gate asked for could not run (the history failed after the
// run began); CI scripts read `.status`.
BaselineComparison SkippedBaseline(std::string reason) {
  BaselineComparison skipped;
  skipped.status = BaselineComparison::Status::kSkipped;
  skipped.reason = std::move(reason);
  return skipped;
}

// The comparison with the baseline run, or why there is none.
void AddBaseline(History& history, const Suite& suite, const std::vector<json::object>& records,
                 const FinishOptions& options, RunSummary& summary, std::vector<std::string>& problems) {
  auto baseline = history.LoadBaseline(suite.id, options.baseline, summary.run_id);
  if (!baseline) {
    problems.push_back("baseline: " + baseline.error().message);
    summary.baseline = SkippedBaseline("baseline: " + baseline.error().message);
  } else if (*baseline) {
    summary.baseline = CompareWithBaseline(summary, records, **baseline, suite.regression_alpha);
  } else {
    // design.md §10.1: said in the summary (and the report), not only on stderr.
    BaselineComparison none;
    none.status = BaselineComparison::Status::kNone;
    none.reason = NoBaselineReason(suite.id, options.baseline);
    none.history = std::filesystem::absolute(options.history_file).lexically_normal().string();
    summary.baseline = std::move(none);
  }
}

}  // namespace

FinishResult FinishRun(const Suite& suite, SummaryHeader header, std::vector<json::object>& records,
                       const FinishOptions& options) {
  FinishResult result;
  if (std::size_t dropped = DedupeRecords(records); dropped > 0) {
    result.notes.push_back(std::to_string(dropped) +
                           " record(s) repeated a case already recorded; each case counts once (its last record)");
    SortRecords(suite, records);
  }
  for (const SuiteSkill& entry : suite.skills) {
    if (!entry.rubric.empty()) header.counted_criteria[entry.label] = entry.counted_criteria;
    header.min_judge_kappa = suite.min_judge_kappa;
  }
  RunSummary summary = BuildSummary(header, records);
  if (!suite.version_pairs.empty()) {
    summary.versions = CompareVersions(summary, records, suite.version_pairs, suite.regression_alpha);
  }
  std::unique_ptr<History> history;
  if (auto opened = History::Open(options.history_file); opened) {
    history = std::move(*opened);
  } else {
    result.problems.push_back("history: " + opened.error().message);
    if (!options.baseline.empty()) summary.baseline = SkippedBaseline("history: " + opened.error().message);
  }
  if (history && !options.baseline.empty()) AddBaseline(*history, suite, records, options, summary, result.problems);
  summary.thresholds = ThresholdsJson(suite);
  summary.breaches = CheckThresholds(summary, suite);
  summary.status = summary.breaches.empty() ? "pass" : "breached";
  AddRunFacts(summary, options);
  std::vector<TrendPoint> trend;
  if (history) {
    if (auto points = history->Trend(suite.id, options.trend_runs); points) {
      trend = std::move(*points);
    } else {
      result.problems.push_back("history: " + points.error().message);
    }
  }
  auto write = [&](std::string_view name, const std::string& text) {
    if (auto written = WriteFileAtomically(options.out_dir / name, text); !written) {
      result.problems.push_back(written.error().message);
    }
  };
  write("summary.json", PrettyJson(summary.ToJson()) + "\n");
  write("junit.xml", JunitXml(summary, records));
  write("report.html", HtmlReport(summary, records, trend));
  if (history && header.shard) {
    result.notes.push_back("shard runs are not recorded in the history; `eval merge` records the whole run");
  } else if (history) {
    if (auto recorded = history->RecordRun(summary, records); !recorded) {
      result.problems.push_back("history: " + recorded.error().message);
    }
  }
  result.exit_status = !result.problems.empty() ? 2 : Failing(summary, options) ? 1 : 0;
  result.summary = std::move(summary);
  return result;
}

}  // namespace skillrunner::eval
