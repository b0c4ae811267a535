#pragma once

// `run`'s fast path (design.md §10.5): an index of a tree that loaded without
// errors, keyed by every file's (path, size, mtime). While the tree on disk
// still has those stamps, `run SKILL` loads only the files that skill needs
// (its skill.yaml, its rubrics, the review skill of its gate) and replays the
// tree's warnings; any change, and the caller does a full load.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/tree/skill_registry.h"

namespace skillrunner {

// What a file looked like when it was read. Files are named as the load named
// them (relative to the working directory when the tree's folders are).
struct FileStamp {
  std::string path;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// The stamp of `path` now (following links, as reading does), or nullopt
// when it cannot be stat'ed.
std::optional<FileStamp> StampOf(const std::string& path);

struct TreeIndex {
  // Whatever else the load depended on (the binary, the config's stamp, the
  // folders, --provider): an index with another identity is never used.
  std::string identity;
  std::vector<FileStamp> skill_files;   // every skills_dir/*/skill.yaml, sorted
  std::vector<FileStamp> rubric_files;  // every rubrics_dir/*.yaml|yml, sorted
  std::vector<FileStamp> other_files;   // schema files the skills name, sorted
  // Per skill id: the files a load of it alone needs.
  std::map<std::string, TreeFiles, std::less<>> needs;
  // The full load's diagnostics (warnings only: a tree with errors has no
  // index), replayed as they came.
  std::vector<Diagnostic> diagnostics;
};

// The index of a full load of the tree `options` names, which began at
// `load_started_ns` (CLOCK_REALTIME_COARSE, the clock file times come from);
// nullopt when the load had errors, or when a file's mtime is not before the
// load began (a change within the same clock tick could keep its stamp).
std::optional<TreeIndex> IndexTree(const RegistryOptions& options, const SkillRegistry::LoadResult& loaded,
                                   std::string identity, std::int64_t load_started_ns);

std::string TreeIndexToJson(const TreeIndex& index);
// Nullopt for text that is not an index this binary wrote.
std::optional<TreeIndex> TreeIndexFromJson(std::string_view text);

// Why the tree on disk no longer matches `index` ("" when every file still
// has its stamp and no skill folder or rubric file came or went).
std::string TreeChange(const TreeIndex& index, const RegistryOptions& options);

// `run`'s registry for skill `id` from the files the index says it needs,
// with the full load's diagnostics; nullopt when the index does not know the
// skill or it does not load alone as it did in the tree.
std::optional<SkillRegistry::LoadResult> LoadFromIndex(const TreeIndex& index, const RegistryOptions& options,
                                                       Config config, std::string_view id);

// CLOCK_REALTIME_COARSE in nanoseconds: what IndexTree's `load_started_ns`
// takes.
std::int64_t CoarseNowNs();

}  // namespace skillrunner
