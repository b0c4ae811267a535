#include "runner/eval/expected_match.h"

#include <boost/json/serialize.hpp>

#include "runner/yaml_json.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

std::string Shown(const json::value& value) {
  std::string text = json::serialize(value);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// Numbers compare by value (1 == 1.0), everything else structurally.
bool Equal(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_double() || b.is_double()) return a.to_number<double>() == b.to_number<double>();
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

std::vector<FieldError> CompareExpected(ExpectedMode mode, const json::value& expected,
                                        const json::value& output) {
  std::vector<FieldError> out;
  if (mode == ExpectedMode::kSubset) {
    Subset(expected, output, "", out);
  } else if (mode == ExpectedMode::kExact && !Equal(expected, output)) {
    out.push_back({"", "expected exactly " + Shown(expected) + ", found " + Shown(output)});
  }
  return out;
}

}  // namespace skillrunner::eval
