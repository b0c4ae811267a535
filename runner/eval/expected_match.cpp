#include "runner/eval/expected_match.h"

#include <boost/json/serialize.hpp>

#include "runner/tree/yaml_json.h"
#include "services/common/json_text.h"
#include "services/common/utf8.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

// At most 80 bytes, cut on a character boundary: the message goes into
// results.jsonl, which must stay valid UTF-8.
std::string Shown(const json::value& value) { return ShortenUtf8(CompactJson(value), 80, "..."); }

// Numbers compare by value (1 == 1.0) at every depth, everything else
// structurally (object member order does not matter; array order does).
bool Equal(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_double() || b.is_double()) return a.to_number<double>() == b.to_number<double>();
    return a == b;
  }
  if (a.is_object() && b.is_object()) {
    const json::object& x = a.as_object();
    const json::object& y = b.as_object();
    if (x.size() != y.size()) return false;
    for (const auto& [key, value] : x) {
      const json::value* other = y.if_contains(key);
      if (!other || !Equal(value, *other)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    const json::array& x = a.as_array();
    const json::array& y = b.as_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!Equal(x[i], y[i])) return false;
    }
    return true;
  }
  return a == b;
}

void Subset(const json::value& expected, const json::value& output, const std::string& path,
            std::vector<FieldError>& out);

bool SubsetMatches(const json::value& expected, const json::value& output) {
  std::vector<FieldError> errors;
  Subset(expected, output, "", errors);
  return errors.empty();
}

void Subset(const json::value& expected, const json::value& output, const std::string& path,
            std::vector<FieldError>& out) {
  if (expected.is_object()) {
    if (!output.is_object()) {
      out.push_back({path, "expected an object, found " + Shown(output)});
      return;
    }
    for (const auto& [key, value] : expected.as_object()) {
      std::string child = AppendPointer(path, key);
      const json::value* actual = output.as_object().if_contains(key);
      if (!actual) {
        out.push_back({child, "missing; expected " + Shown(value)});
      } else {
        Subset(value, *actual, child, out);
      }
    }
    return;
  }
  if (expected.is_array()) {
    if (!output.is_array()) {
      out.push_back({path, "expected an array, found " + Shown(output)});
      return;
    }
    for (const auto& element : expected.as_array()) {
      bool found = false;
      for (const auto& candidate : output.as_array()) found = found || SubsetMatches(element, candidate);
      if (!found) out.push_back({path, "no element matches " + Shown(element)});
    }
    return;
  }
  if (!Equal(expected, output)) {
    out.push_back({path, "expected " + Shown(expected) + ", found " + Shown(output)});
  }
}

}  // namespace

std::vector<FieldError> CompareExpected(ExpectedMode mode, const json::value& expected, const json::value& output) {
  std::vector<FieldError> out;
  if (mode == ExpectedMode::kSubset) {
    Subset(expected, output, "", out);
  } else if (mode == ExpectedMode::kExact && !Equal(expected, output)) {
    out.push_back({"", "expected exactly " + Shown(expected) + ", found " + Shown(output)});
  }
  return out;
}

}  // namespace skillrunner::eval
