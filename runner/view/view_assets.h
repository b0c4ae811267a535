#pragma once

#include <string_view>

namespace skillrunner::view {

// The viewer's assets compiled into the program (runner/view/assets/, written
// into the build by scripts/embed_assets.cmake): "app.js", "app.css"; empty
// for any other name.
std::string_view ViewAsset(std::string_view name);

}  // namespace skillrunner::view
