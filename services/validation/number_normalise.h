#pragma once

#include <boost/json/value.hpp>
#include <cstddef>

namespace skillrunner::validation {

// valijson's Boost.JSON adapter sees a uint64 as neither an integer nor a
// double (design.md §7). Rewrites every uint64 in place: to int64 when it fits,
// otherwise to the nearest double. Iterative: any depth is safe.
void NormaliseNumbers(boost::json::value& value);

struct InstanceShape {
  bool too_deep = false;    // nested deeper than the limit
  bool has_uint64 = false;  // needs NormaliseNumbers before valijson sees it
};

// Walks `value` iteratively, stopping below `max_depth` levels of nesting.
InstanceShape InspectInstance(const boost::json::value& value, std::size_t max_depth);

}  // namespace skillrunner::validation
