#pragma once

// junit.xml for CI systems: one <testsuite> per skill inside <testsuites>,
// one <testcase classname="<skill>" name="<case>[#repeat]" time="<seconds>">
// per results.jsonl record. A failed case (review failed, expected mismatch)
// is a <failure>; an invocation error is an <error type="<CODE>">; a judge
// error is an <error type="JUDGE_ERROR">, never a failure, because nothing is
// known about the output's quality. Each suite carries tests, failures and
// errors counts; <properties> holds the run id. Text from records is escaped,
// and characters XML 1.0 forbids are replaced, so the file always parses.

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "runner/eval/records/run_summary.h"

namespace skillrunner::eval {

std::string JunitXml(const RunSummary& summary, const std::vector<boost::json::object>& records);

}  // namespace skillrunner::eval
