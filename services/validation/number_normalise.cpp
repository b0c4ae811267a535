#include "services/validation/number_normalise.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace skillrunner::validation {
namespace {

void NormaliseScalar(boost::json::value& value) {
  const std::uint64_t number = value.get_uint64();
  if (number <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    value = static_cast<std::int64_t>(number);
  } else {
    value = static_cast<double>(number);
  }
}

}  // namespace

void NormaliseNumbers(boost::json::value& value) {
  std::vector<boost::json::value*> pending{&value};
  while (!pending.empty()) {
    boost::json::value* current = pending.back();
    pending.pop_back();
    if (current->is_uint64()) {
      NormaliseScalar(*current);
    } else if (auto* array = current->if_array()) {
      for (auto& item : *array) pending.push_back(&item);
    } else if (auto* object = current->if_object()) {
      for (auto& member : *object) pending.push_back(&member.value());
    }
  }
}

InstanceShape InspectInstance(const boost::json::value& value, std::size_t max_depth) {
  InstanceShape shape;
  std::vector<std::pair<const boost::json::value*, std::size_t>> pending{{&value, 0}};
  while (!pending.empty()) {
    auto [current, depth] = pending.back();
    pending.pop_back();
    if (current->is_uint64()) {
      shape.has_uint64 = true;
      continue;
    }
    const bool container = current->is_array() || current->is_object();
    if (!container) continue;
    if (depth >= max_depth) {
      shape.too_deep = true;
      return shape;
    }
    if (const auto* array = current->if_array()) {
      for (const auto& item : *array) pending.emplace_back(&item, depth + 1);
    } else {
      for (const auto& member : current->get_object()) pending.emplace_back(&member.value(), depth + 1);
    }
  }
  return shape;
}

}  // namespace skillrunner::validation
