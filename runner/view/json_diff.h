#pragma once

// A structural diff of two JSON values for the viewer's compare page: the
// pointers (RFC 6901) where one side has a member or item the other lacks,
// and where both have a value that differs. Objects are compared member by
// member, arrays item by item (by index); a change of type is one "changed".

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstddef>

namespace skillrunner::view {

// [{"op": "added"|"removed"|"changed", "pointer", "a"?, "b"?}]: "added" is in
// `a` only (the newer run), "removed" in `b` only, in document order, at most
// `limit` entries.
boost::json::array DiffJson(const boost::json::value& a, const boost::json::value& b, std::size_t limit = 200);

}  // namespace skillrunner::view
