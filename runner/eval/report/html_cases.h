#pragma once

// The "failing cases" section of report.html: failed cases, invocation
// errors and judge errors in three separate lists (a judge error is neither a
// pass nor a fail), each case in a <details> with its attempts (kind, errors
// with their paths, raw text truncated to a few KB), review and error.
// Internal to runner/eval.

#include <boost/json/object.hpp>
#include <string>
#include <vector>

namespace skillrunner::eval::report {

std::string FailingCasesSection(const std::vector<boost::json::object>& records);

}  // namespace skillrunner::eval::report
