#pragma once

// The eval summary as the JSON a user reads (summary.json), for tests that build a summary by hand or
// assert on its members: each goes through RunSummary's one parse (FromJson) and one serialize (ToJson),
// so these tests hold the type's edges to the format as well as the figures.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "runner/eval/records/run_summary.h"
#include "runner/eval/regression.h"
#include "runner/eval/report/html_report.h"
#include "runner/eval/report/junit_report.h"
#include "runner/eval/summary.h"
#include "runner/eval/thresholds.h"

namespace skillrunner::eval {

inline boost::json::object SummaryJson(const SummaryHeader& header, const std::vector<boost::json::object>& records) {
  return BuildSummary(header, records).ToJson();
}

inline boost::json::object CompareWithBaseline(const boost::json::object& summary,
                                               const std::vector<boost::json::object>& records,
                                               const BaselineRun& baseline, double alpha = 0.05) {
  return BaselineJson(CompareWithBaseline(RunSummary::FromJson(summary), records, baseline, alpha));
}

inline boost::json::array CheckThresholds(const boost::json::object& summary, const Suite& suite) {
  return BreachesJson(CheckThresholds(RunSummary::FromJson(summary), suite));
}

inline std::string JunitXml(const boost::json::object& summary, const std::vector<boost::json::object>& records) {
  return JunitXml(RunSummary::FromJson(summary), records);
}

inline std::string HtmlReport(const boost::json::object& summary, const std::vector<boost::json::object>& records,
                              const std::vector<TrendPoint>& trend) {
  return HtmlReport(RunSummary::FromJson(summary), records, trend);
}

}  // namespace skillrunner::eval
