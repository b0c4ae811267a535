#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner {

// Levenshtein distance, for "did you mean" hints.
std::size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace skillrunner
