#pragma once

// The history as the viewer reads it (design.md §11.3), a file or a
// postgresql:// URL: opened read-only and never migrated, so looking at a
// history can never change it. Runs with
// their summaries, each run's precomputed measures, and each case's whole
// record, as `eval` recorded them (schema 6 and later).
//
// Not thread-safe: one reader per thread, or a lock around it.

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/history/history.h"
#include "runner/eval/history/rollout_log.h"
#include "runner/eval/history/run_measures.h"
#include "services/common/error.h"

namespace skillrunner::eval {

struct RunRow {
  std::string run_id;
  std::string suite;
  std::string started_at;
  std::string finished_at;
  std::string status;
  std::optional<std::string> git_ref;
  RunSummary summary;
  std::vector<std::string> models = {};  // the models its cases were answered by
};

struct SuiteRow {
  std::string suite;
  std::int64_t runs = 0;
  RunRow last;
};

struct StoredMeasure {
  std::string run_id;
  MeasureCount count;
};

// How many of a rollout's answers on one arm the online review judged, and passed.
struct SampleTally {
  std::string rollout;
  std::string arm;
  std::int64_t judged = 0;
  std::int64_t passed = 0;
};

// One case of one run, for a case across runs.
struct CaseRun {
  std::string run_id;
  std::string started_at;
  std::optional<std::string> git_ref;
  boost::json::object record;
};

class HistoryReader {
 public:
  // Opens `file` read-only. CONFIG_INVALID names the file when it is missing
  // or was written by an older skillrunner (view never migrates: the next
  // `eval` with this history upgrades it); INTERNAL for a schema newer than
  // this program or an SQLite failure.
  static Result<std::unique_ptr<HistoryReader>> Open(const std::string& location);
  ~HistoryReader();
  HistoryReader(const HistoryReader&) = delete;
  HistoryReader& operator=(const HistoryReader&) = delete;

  const std::string& name() const;

  // Every suite with its number of whole runs and its newest one, by suite id.
  Result<std::vector<SuiteRow>> Suites();
  // The newest `limit` whole runs of `suite` (shard runs left out), oldest first.
  Result<std::vector<RunRow>> Runs(std::string_view suite, std::size_t limit);
  Result<std::optional<RunRow>> Run(std::string_view run_id);
  // The measures of the newest `limit` whole runs of `suite`.
  Result<std::vector<StoredMeasure>> SuiteMeasures(std::string_view suite, std::size_t limit);
  Result<std::vector<MeasureCount>> RunMeasures(std::string_view run_id);
  // The run's records, in the order they were recorded.
  Result<std::vector<boost::json::object>> Records(std::string_view run_id);
  Result<std::optional<boost::json::object>> Record(std::string_view run_id, std::string_view skill,
                                                    std::string_view case_id, std::int64_t repeat);
  // The case in the newest `limit` whole runs of `suite`, oldest first.
  Result<std::vector<CaseRun>> CaseAcrossRuns(std::string_view suite, std::string_view skill, std::string_view case_id,
                                              std::int64_t repeat, std::size_t limit);
  // Every rollout's points (decisions, commands, snapshots), by rollout then time; at most the
  // newest `limit` of each rollout.
  Result<std::vector<RolloutPoint>> RolloutPoints(std::size_t limit);
  // The judged samples of every rollout, counted per arm.
  Result<std::vector<SampleTally>> RolloutSamples();
  // The whole run of the same suite that began last before `run`; nullopt when none did.
  Result<std::optional<RunRow>> Previous(const RunRow& run);

 private:
  struct Impl;
  explicit HistoryReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A run's records as a baseline to compare another run with (CompareWithBaseline).
BaselineRun BaselineFromRecords(const RunRow& run, const std::vector<boost::json::object>& records);

}  // namespace skillrunner::eval
