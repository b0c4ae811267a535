#pragma once

// summary.json, computed from results.jsonl records alone (so a resumed or
// merged run summarises exactly what its records say). Per skill and per
// criterion; judge errors and indeterminate verdicts are counted apart and
// never enter a pass rate:
//   rubric_pass_rate = passed / judged (judged = cases with a usable verdict)
//   criterion pass_rate = passed / (passed + failed); indeterminate_rate =
//   indeterminate / judged.
// With --rejudge, criteria get "agreement" (share of re-judged cases whose
// verdicts on the criterion all agree) and "unstable" (agreement < 0.8).

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skillrunner::eval {

inline constexpr double kStableAgreement = 0.8;

struct SummaryHeader {
  std::string run_id;
  std::string suite;
  std::string started_at;
  std::string finished_at;
  std::int64_t duration_ms = 0;
  std::optional<std::string> shard;
  int concurrency = 0;
  std::vector<std::string> skills;  // suite order; skills without records still appear
};

// {"run_id", "suite", "started_at", "finished_at", "duration_ms", "shard"?,
//  "concurrency", "totals", "skills"}; "breaches", "status" and "baseline"
// are added by the caller.
boost::json::object BuildSummary(const SummaryHeader& header, const std::vector<boost::json::object>& records);

}  // namespace skillrunner::eval
