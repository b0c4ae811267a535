#include "runner/cli/tree_at_ref.h"

#include <stdlib.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <system_error>
#include <vector>

#include "runner/cli/run_program.h"

namespace skillrunner::cli {
namespace fs = std::filesystem;

namespace {

// `dir` relative to the repository's top folder, or nullopt when it lies outside it.
std::optional<std::string> InRepository(const fs::path& top, const fs::path& dir) {
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return std::nullopt;
  const fs::path relative = where.lexically_relative(top);
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative == "." ? std::string() : relative.generic_string();
}

// Writes `relative` as `commit` has it under `into` (an empty folder when the commit lacks it);
// an error message, or empty.
std::string Extract(const fs::path& top, const std::string& commit, const std::string& relative, const fs::path& into) {
  std::error_code ec;
  fs::create_directories(into / relative, ec);
  if (RunProgram({"git", "-C", top.string(), "cat-file", "-e", commit + ":" + relative}).status != 0) return {};
  Ran archive = RunProgram(
      {"git", "-C", top.string(), "archive", "--format=tar", commit, "--", relative.empty() ? "." : relative});
  if (archive.status != 0) return "git archive " + commit + " -- " + relative + " failed: " + archive.err;
  Ran untar = RunProgram({"tar", "-x", "-C", into.string()}, std::move(archive.out));
  if (!untar.started) return "cannot run tar to unpack the tree at " + commit;
  if (untar.status != 0) return "tar could not unpack the tree at " + commit + ": " + untar.err;
  return {};
}

// A fresh temporary folder, removed with the last copy of the pointer.
std::shared_ptr<const fs::path> TemporaryFolder() {
  std::string pattern = (fs::temp_directory_path() / "skillrunner-against-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return nullptr;
  return std::shared_ptr<const fs::path>(new fs::path(pattern), [](const fs::path* path) {
    std::error_code ec;
    fs::remove_all(*path, ec);
    delete path;
  });
}

// Extracts both folders of `commit` into a temporary folder.
RefLookup ExtractTree(const fs::path& top, TreeAtRef tree, const fs::path& skills_dir, const fs::path& rubrics_dir) {
  RefLookup lookup;
  tree.temp = TemporaryFolder();
  if (!tree.temp) {
    lookup.error = "cannot make a temporary folder for the tree at " + tree.ref;
    return lookup;
  }
  const fs::path into = *tree.temp / "tree";
  const auto skills = InRepository(top, skills_dir).value_or("");
  tree.skills_dir = into / skills;
  lookup.error = Extract(top, tree.commit, skills, into);
  tree.rubrics_dir = rubrics_dir;  // outside the repository: the same rubrics both sides
  if (auto rubrics = InRepository(top, rubrics_dir); rubrics && lookup.error.empty()) {
    tree.rubrics_dir = into / *rubrics;
    lookup.error = Extract(top, tree.commit, *rubrics, into);
  }
  if (lookup.error.empty()) lookup.tree = std::move(tree);
  return lookup;
}

}  // namespace

RefLookup LookUpTreeAt(const std::string& ref, const fs::path& skills_dir, const fs::path& rubrics_dir) {
  RefLookup lookup;
  std::error_code ec;
  if (!fs::is_directory(skills_dir, ec)) {
    lookup.not_compared = skills_dir.string() + " is not a folder";
    return lookup;
  }
  Ran top = RunProgram({"git", "-C", skills_dir.string(), "rev-parse", "--show-toplevel"});
  if (!top.started) {
    lookup.not_compared = "git is not installed";
    return lookup;
  }
  if (top.status != 0) {
    const bool plain = top.err.find("not a git repository") != std::string::npos;
    const std::string first_line = top.err.substr(0, top.err.find('\n'));
    lookup.not_compared =
        skills_dir.string() + " is not in a git work tree" + (plain ? "" : " (git: " + first_line + ")");
    return lookup;
  }
  const fs::path root = Trimmed(top.out);
  Ran commit = RunProgram(
      {"git", "-C", root.string(), "rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"});
  if (commit.status != 0 && ref == "HEAD") {
    lookup.not_compared = "the repository has no commit yet";
    return lookup;
  }
  if (commit.status != 0) {
    lookup.error = "no such commit in " + root.string();
    return lookup;
  }
  return ExtractTree(root, TreeAtRef{ref, Trimmed(commit.out), {}, {}, nullptr}, skills_dir, rubrics_dir);
}

}  // namespace skillrunner::cli
