#pragma once

// What happens after the cases of a run (or a merge of shards) are recorded:
// the summary, the history, the baseline comparison, the thresholds, the
// files in DIR, in this order:
//   open history -> load baseline (when asked) -> CompareWithBaseline ->
//   thresholds -> summary.json, junit.xml, report.html -> RecordRun.
// A history that cannot be opened or written is a run error (exit 2), but
// the reports are still written so that the night's results can be read.

#include <boost/json/object.hpp>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runner/eval/history/response_cache.h"
#include "runner/eval/suite.h"
#include "runner/eval/summary.h"

namespace skillrunner::eval {

struct FinishOptions {
  std::filesystem::path out_dir;
  std::filesystem::path history_file;
  std::string baseline;  // "last", a run id, or empty for no comparison
  std::size_t trend_runs = 30;
  bool fail_on_regressions_only = false;       // --fail-on regressions
  std::shared_ptr<const ResponseCache> cache;  // --cache
};

struct FinishResult {
  int exit_status = 0;  // 0 pass, 1 breached, 2 run error
  RunSummary summary;
  std::vector<std::string> problems;  // run errors, for stderr
  std::vector<std::string> notes;     // worth saying, not errors
};

// The default history file: DIR/../eval-history.sqlite.
std::filesystem::path DefaultHistoryFile(const std::filesystem::path& out_dir);

// Why a run has no baseline: summary.json's `baseline.reason`, and after
// "no baseline: " the stderr line.
// `which`: last, last-passing or pinned.
std::string NoBaselineReason(const std::string& suite_id, std::string_view which);

// Orders records as the suite lists skills and cases (then repeats); records
// of skills or cases the suite no longer has go last, by key.
void SortRecords(const Suite& suite, std::vector<boost::json::object>& records);

// `records` are deduplicated first (DedupeRecords: one per case key, the
// last wins; a note says how many were dropped), so a case recorded twice is
// counted once everywhere. Fills the header's counted criteria from the
// suite. A shard run (header.shard set) is not recorded in the history: its
// summary covers a slice of the suite, and several shards of one night may
// share a run id; `eval merge` records the night's run (the merged one), so
// `--baseline last` and the trend only ever see whole runs.
FinishResult FinishRun(const Suite& suite, SummaryHeader header, std::vector<boost::json::object>& records,
                       const FinishOptions& options);

}  // namespace skillrunner::eval
