#pragma once

// Checks a case's output against its `expected` value (design.md §6.3).
//   exact:  the whole output equals `expected` (numbers by value at every
//           depth: {"score": 1} equals {"score": 1.0}).
//   subset: every leaf of `expected` (by JSON pointer) has an equal value in
//           the output; objects may carry more members. An array in
//           `expected` is a set: each of its elements must match (as a subset)
//           some element of the output array, in any order.
// Returns one FieldError per mismatch ({path: pointer into the output,
// message}); empty when the output matches.

#include <boost/json/value.hpp>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::eval {

// How a suite compares a case's output with its `expected` (a suite's `expected:`).
enum class ExpectedMode { kNone, kExact, kSubset };

std::vector<FieldError> CompareExpected(ExpectedMode mode, const boost::json::value& expected,
                                        const boost::json::value& output);

}  // namespace skillrunner::eval
