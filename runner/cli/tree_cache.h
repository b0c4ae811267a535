#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "runner/cli/environment.h"

namespace skillrunner::cli {

// Where `run` keeps the index of each tree it loaded (design.md §10.5):
// $XDG_CACHE_HOME/skillrunner, else ~/.cache/skillrunner; nullopt when
// neither variable is set or SKILLRUNNER_NO_TREE_CACHE is set (non-empty).
std::optional<std::filesystem::path> TreeCacheDir(const EnvLookup& env);

// The registry `run SKILL` needs. When `cache_dir` holds an index of this
// tree written by this very binary, with this config, and every file still
// has its stamp: only the skill's own files (with its rubrics and gate's
// review skill) are loaded and the tree's warnings replayed from the index.
// Otherwise a full load, whose index is written when the tree had no errors.
// `started_ns`: CoarseNowNs() before the config was read. Cache failures
// (an unwritable folder, a corrupt index) only fall back to the full load,
// logged at debug.
SkillRegistry::LoadResult LoadRegistryForRun(const CommonOptions& options, Config config, std::string_view skill,
                                             const std::optional<std::filesystem::path>& cache_dir,
                                             std::int64_t started_ns);

}  // namespace skillrunner::cli
