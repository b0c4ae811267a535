#pragma once

// `validate --against REF`: the skills and rubrics folders as a git commit
// has them, to compare schemas with (as `buf breaking --against` does).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace skillrunner::cli {

// The two folders extracted from one commit into a temporary folder, which is
// removed when the last copy of this goes.
struct TreeAtRef {
  std::string ref;
  std::string commit;  // the full hash `ref` names
  std::filesystem::path skills_dir;
  std::filesystem::path rubrics_dir;  // the working tree's own when it is not in the repository
  std::shared_ptr<const std::filesystem::path> temp;
};

// What there is to compare with: a tree, or why there is none (not a git
// work tree, git not installed, a repository without a commit yet), or an
// error (a ref that names no commit, git failing).
struct RefLookup {
  std::optional<TreeAtRef> tree;
  std::string not_compared;
  std::string error;
};

// Looks `ref` up in the git work tree `skills_dir` is in and extracts both
// folders as that commit has them (a folder the commit lacks is empty).
RefLookup LookUpTreeAt(const std::string& ref, const std::filesystem::path& skills_dir,
                       const std::filesystem::path& rubrics_dir);

}  // namespace skillrunner::cli
