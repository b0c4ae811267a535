#pragma once

// Planning and running the cases of a suite: which cases this process runs
// (shard, resume, the re-judge sample), and a bounded pool of coroutines on
// one io_context that runs them and appends each record as it finishes.

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "runner/eval/case_runner.h"
#include "runner/eval/progress.h"
#include "runner/eval/records/results_log.h"
#include "runner/eval/shard.h"
#include "runner/eval/suite.h"

namespace skillrunner::eval {

struct PlanOptions {
  Shard shard;
  int rejudge = 0;                  // --rejudge K: extra judgings of sampled cases
  std::size_t rejudge_sample = 20;  // cases per skill to re-judge
};

// Every case of the suite x repeats, in suite order, keeping those in
// `options.shard` and not in `done` (case keys already recorded). The re-judge
// sample is the `rejudge_sample` cases of each skill with the smallest
// StableHash of their key, chosen over the whole suite so that shards and
// resumed runs agree on it.
std::vector<CaseTask> PlanCases(const Suite& suite, const PlanOptions& options, const std::set<std::string>& done);

// A fingerprint of everything the suite plans to run, whatever the shard:
// every case key (skill, case id, repeat) with the case's input and expected
// value, in suite order. Two runs with the same hash ran the same cases.
std::string PlanHash(const Suite& suite);

// The case keys of the whole suite (no shard), in suite order.
std::vector<std::string> PlannedKeys(const Suite& suite);

struct RunStats {
  std::size_t finished = 0;         // records written
  std::size_t internal_errors = 0;  // cases a bug stopped; not recorded, so --resume retries them
  std::string write_error;          // non-empty: results.jsonl could not be written; the run stopped
  // CaseDeps::replay_only: "cache miss: skill S case C request sha256:H" per
  // request a case needed and the cache did not hold (that case is not
  // recorded), in the order the cases finished.
  std::vector<std::string> cache_misses;
};

// Runs `tasks` with at most `concurrency` at a time on `io`, driven by
// `threads` threads, appending each record to `writer` and counting it in
// `progress`. Returns when every task is done (or writing failed). `io` must
// be the context the runtime's providers were created on.
RunStats RunCases(const std::vector<CaseTask>& tasks, const CaseDeps& deps, ResultsWriter& writer, Progress& progress,
                  boost::asio::io_context& io, int concurrency, int threads);

}  // namespace skillrunner::eval
