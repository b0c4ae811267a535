#pragma once

// `skillrunner eval SUITE.yaml --out DIR` and `skillrunner eval merge --out
// DIR SRC...` (design.md §6.3, §8). Exit status: 0 every threshold held, 1 a
// threshold or regression breached, 2 the run itself failed (bad suite,
// unreadable dataset, DIR not writable, history unusable).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/cli/environment.h"

namespace CLI {
class App;
}  // namespace CLI

namespace skillrunner::cli {

struct EvalOptions {
  std::string suite;
  std::string out;
  int concurrency = 0;  // 0: the suite's, else 16
  int threads = 0;      // 0: min(4, cores)
  bool resume = false;
  bool batch = false;  // --batch: through the providers' batch APIs (design.md §10.6)
  std::string shard;
  int rejudge = 0;
  std::int64_t rejudge_sample = 20;
  std::string history;                    // empty: DIR/../eval-history.sqlite
  std::string baseline;                   // last | last-passing | pinned | RUN_ID
  bool require_baseline = false;          // no baseline found: exit 2 before any case runs
  std::string fail_on = "any";            // any (= thresholds,regressions) | regressions
  std::string rejudge_from;               // RUN_ID | DIR
  std::optional<std::string> cache;       // --cache [FILE]: "" for the default file
  std::string cache_ttl;                  // --cache-ttl
  std::string cache_mode = "read-write";  // --cache-mode read-write | replay | refresh
  std::string run_id;                     // empty: a new one (kept across --resume)
  std::string git_ref;                    // empty: GITHUB_SHA, else CI_COMMIT_SHA, else none
  std::vector<std::string> merge_sources;
  std::string merge_suite;  // merge: the suite file, default the shards' run.json
  // compare (design.md §9.5): two runs, the rubric, the judge model.
  std::string compare_a, compare_b, compare_rubric, compare_judge_model;
  std::string pin_run;  // eval pin RUN_ID
};

// Adds `eval` (and `eval merge`) to `app`; Run executes whichever was parsed.
class EvalCommand {
 public:
  explicit EvalCommand(CLI::App& app);
  bool parsed() const;
  int Run(const CommonOptions& common);

 private:
  void AddMerge();    // eval merge
  void AddCompare();  // eval compare
  void AddPin();      // eval pin
  CLI::App* eval_ = nullptr;
  CLI::App* merge_ = nullptr;
  CLI::App* compare_ = nullptr;
  CLI::App* pin_ = nullptr;
  EvalOptions options_;
};

// The two flows (runner/eval/orchestrate.h does the work).
int RunEval(const CommonOptions& common, const EvalOptions& options);
int MergeEval(const CommonOptions& common, const EvalOptions& options);
int CompareEval(const CommonOptions& common, const EvalOptions& options);

}  // namespace skillrunner::cli
