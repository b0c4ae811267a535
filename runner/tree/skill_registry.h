#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/tree/config.h"
#include "runner/tree/diagnostic.h"
#include "runner/tree/skill.h"
#include "services/common/error.h"
#include "services/review/rubric.h"

namespace skillrunner {

using review::Criterion;
using review::Rubric;

struct SkillEntry;  // skill_registry.cpp: one skill file while a tree loads

// The files a tree's load reads first: `skills_dir/*/skill.yaml` (folders
// without one are not skills) and `rubrics_dir/*.yaml|yml`, each sorted.
struct TreeFiles {
  std::vector<std::filesystem::path> skill_files;
  std::vector<std::filesystem::path> rubric_files;
};

struct RegistryOptions {
  std::filesystem::path skills_dir = "skills";
  std::filesystem::path rubrics_dir = "rubrics";
  // Names a `handler:` may take ("exec" and the built-ins).
  std::function<bool(std::string_view)> is_known_handler;
};

// Every skill and rubric of a tree, loaded and checked once. Immutable and
// shared: a reload builds a new registry and swaps it in.
class SkillRegistry {
 public:
  struct LoadResult {
    std::shared_ptr<const SkillRegistry> registry;  // never null: the good parts
    std::vector<Diagnostic> diagnostics;            // errors and warnings, by file
  };

  // Loads `skills_dir/*/skill.yaml` and `rubrics_dir/*.yaml`. A broken file
  // never stops the others: it is reported and left out.
  static LoadResult Load(const RegistryOptions& options, Config config);
  // Loads exactly `files` (a subset of a tree's, e.g. one skill with the
  // rubrics and review skill it names), with the same checks as Load.
  // Listing problems are Load's alone.
  static LoadResult LoadFiles(const RegistryOptions& options, Config config, const TreeFiles& files);
  // The files of the tree `options` names; a missing or unlistable skills
  // folder is a diagnostic (a missing rubrics folder is not).
  static TreeFiles ListTree(const RegistryOptions& options, std::vector<Diagnostic>& diagnostics);

  const Skill* FindSkill(std::string_view id) const;
  const Rubric* FindRubric(std::string_view id) const;
  std::shared_ptr<const Rubric> FindRubricShared(std::string_view id) const;
  // Sorted by id.
  const std::vector<std::shared_ptr<const Skill>>& skills() const { return skills_; }
  const std::vector<std::shared_ptr<const Rubric>>& rubrics() const { return rubrics_; }
  const Config& config() const { return config_; }
  // Why the skill or rubric with this id did not load ("FILE:LINE:COL:
  // message", its first error), or nullopt when none by that id failed.
  std::optional<std::string> FailedSkill(std::string_view id) const;
  std::optional<std::string> FailedRubric(std::string_view id) const;
  // The skill ids closest to `id` (for "did you mean" hints), at most 3.
  std::vector<std::string> SimilarSkillIds(std::string_view id) const;

 private:
  void LoadRubrics(const std::vector<std::filesystem::path>& files, std::vector<Diagnostic>& diagnostics);
  // The LLM_REVIEW skill a gate names, or why it cannot judge.
  using ReviewerLookup = std::function<Result<const Skill*>(std::string_view)>;
  void LoadSkills(const RegistryOptions& options, const std::vector<std::filesystem::path>& files,
                  std::vector<Diagnostic>& diagnostics);
  // Adds the skills that loaded and linked, in id order; remembers why the
  // others did not.
  void Register(std::vector<SkillEntry>& entries, std::map<std::string, std::string, std::less<>>& unloaded,
                std::vector<Diagnostic>& diagnostics);
  bool LinkSkill(Skill& skill, const RegistryOptions& options, const std::string& file, const ReviewerLookup& reviewers,
                 std::vector<Diagnostic>& diagnostics) const;
  // A rollout's candidate, loaded beside `skill` and held to it (rollout_link.cpp), and the
  // judge of its online review.
  bool LinkRollout(Skill& skill, const RegistryOptions& options, const std::string& file,
                   const ReviewerLookup& reviewers, std::vector<Diagnostic>& diagnostics) const;
  bool LinkOnlineJudge(Skill& skill, const std::string& file, const ReviewerLookup& reviewers,
                       std::vector<Diagnostic>& diagnostics) const;
  bool LinkGateSkill(Skill& skill, const std::string& file, const ReviewerLookup& reviewers,
                     const std::function<SourcePosition(const std::string&)>& where,
                     std::vector<Diagnostic>& diagnostics) const;

  Config config_;
  std::vector<std::shared_ptr<const Skill>> skills_;
  std::vector<std::shared_ptr<const Rubric>> rubrics_;
  std::map<std::string, const Skill*, std::less<>> skill_index_;
  std::map<std::string, std::shared_ptr<const Rubric>, std::less<>> rubric_index_;
  std::map<std::string, std::string, std::less<>> failed_skills_;
  std::map<std::string, std::string, std::less<>> failed_rubrics_;
};

// Loads one rubric file (checked against rubric.schema.json and for unique
// criterion ids). Exposed for tests and for eval suites.
std::expected<Rubric, std::vector<Diagnostic>> LoadRubricFile(const std::string& path);

// Loads one skill file without the cross-file checks (rubric references and
// id uniqueness). Warnings are appended to `warnings`.
std::expected<Skill, std::vector<Diagnostic>> LoadSkillFile(
    const std::string& path, const Config& config, const std::function<bool(std::string_view)>& is_known_handler,
    std::vector<Diagnostic>& warnings);
// The same for `text` already read from `path` (the file it names in
// diagnostics; schema files given by path are read beside it).
std::expected<Skill, std::vector<Diagnostic>> LoadSkillText(
    const std::string& path, std::string_view text, const Config& config,
    const std::function<bool(std::string_view)>& is_known_handler, std::vector<Diagnostic>& warnings);

}  // namespace skillrunner
