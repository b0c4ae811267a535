#pragma once

#include <boost/json/array.hpp>
#include <filesystem>
#include <string>
#include <vector>

namespace skillrunner {

struct Criterion {
  std::string id;
  std::string description;
  bool required = false;
  std::string guidance;
  boost::json::array examples;
};

// A checked rubric (DESIGN §4). Immutable once loaded.
struct Rubric {
  std::string id;
  std::string description;
  std::vector<Criterion> criteria;
  double indeterminate_below_confidence = 50;
  // "all" or "required"; empty means the DESIGN default: the required
  // criteria when any is marked required, else all of them.
  std::string pass_rule;
  std::filesystem::path file;
};

}  // namespace skillrunner
