#pragma once

// report.html: one self-contained HTML5 file (inline CSS and SVG, no
// external URLs, scripts or fonts) that a person would rather read than
// summary.json: the run's header and breaches, per-skill tables, per-criterion
// bars, attempt and latency histograms, the baseline comparison, trends over
// past runs and the failing cases with their attempts. Everything taken from
// records is HTML-escaped (model output is hostile). Missing or null fields
// show as "—"; odd input never throws.

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "runner/eval/history/history.h"

namespace skillrunner::eval {

// `trend` is History::Trend's answer (oldest first); it may be empty. The
// trend lines end with this run: `summary` is added as the newest point, and
// replaces a point of `trend` with the same run id (a resumed run).
std::string HtmlReport(const RunSummary& summary, const std::vector<boost::json::object>& records,
                       const std::vector<TrendPoint>& trend);

}  // namespace skillrunner::eval
