#pragma once

// The viewer's answers built from what the history reader read (view_api.h
// says which answer is which; schemas/view/ has their schemas).

#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/history/history_reader.h"

namespace skillrunner::view {

// A suite's runs narrowed to one skill, model or git ref (the API's query).
struct SuiteFilter {
  std::optional<std::string> skill, model, git_ref;
};

// A number, or null when there is none; a text, or null.
boost::json::value OrNull(std::optional<double> value);
boost::json::value OrNull(const std::optional<std::string>& text);

// {"successes", "n", "rate"?, "low"?, "high"?}: the rate with its Wilson 95% interval (none for n = 0).
boost::json::object RateJson(std::int64_t successes, std::int64_t n);

// {"run_id", "suite", "started_at", "finished_at", "git_ref", "status"}
boost::json::object RunHead(const eval::RunRow& run);

boost::json::object SuiteJson(std::string_view suite, const SuiteFilter& filter, const std::vector<eval::RunRow>& runs,
                              const std::vector<eval::StoredMeasure>& measures);

// `baseline` (may be null) and its records decide which cases flipped.
boost::json::object RunJson(const eval::RunRow& run, const std::vector<eval::MeasureCount>& measures,
                            const std::vector<boost::json::object>& records, const eval::RunRow* baseline,
                            const std::vector<boost::json::object>& baseline_records);

// `a` is the newer run, `b` the one it is compared with.
boost::json::object CompareJson(const eval::RunRow& a, const std::vector<boost::json::object>& a_records,
                                const eval::RunRow& b, const std::vector<boost::json::object>& b_records);

// Each rollout of `points` (by rollout, then time), with the samples' counts.
boost::json::object RolloutsJson(const std::vector<eval::RolloutPoint>& points,
                                 const std::vector<eval::SampleTally>& samples);

// Each entry of the run's summary "versions": the paired measures of the candidate against the stable
// version and its flipped cases, the stable side as "b" and the candidate as "a".
boost::json::object VersionsJson(const eval::RunRow& run, const std::vector<eval::VersionComparison>& versions,
                                 const std::vector<boost::json::object>& records);

boost::json::object CaseJson(std::string_view suite, std::string_view skill, std::string_view case_id,
                             std::int64_t repeat, const std::vector<eval::CaseRun>& runs);

}  // namespace skillrunner::view
