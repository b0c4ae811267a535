// `skillrunner rollout promote SKILL [--force]` (design.md §11.2): a ready
// candidate becomes the skill's skill.yaml (it has no rollout block of its
// own), its file goes, and the diff is printed for the team to commit.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/cli/environment.h"
#include "runner/cli/rollout_store.h"
#include "runner/cli/run_program.h"
#include "runner/rollout/rollout_book.h"
#include "services/common/text.h"

namespace skillrunner::cli {
namespace fs = std::filesystem;

namespace {

constexpr int kUsageStatus = 2;

int Refuse(const std::string& message) {
  std::fprintf(stderr, "skillrunner rollout promote: %s\n", message.c_str());
  return kUsageStatus;
}

// Replaces `path` with `text` whole (written aside, then renamed over).
bool WriteWhole(const fs::path& path, const std::string& text) {
  const fs::path aside = path.string() + ".promote.tmp";
  {
    std::ofstream out(aside, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  fs::rename(aside, path, ec);
  return !ec;
}

// What changed, as `diff -u` says it (or the paths alone when diff is not installed).
void PrintDiff(const fs::path& stable, const fs::path& candidate) {
  const std::string shown = stable.string();
  Ran diff =
      RunProgram({"diff", "-u", "--label", "a/" + shown, "--label", "b/" + shown, stable.string(), candidate.string()});
  if (diff.started && (diff.status == 0 || diff.status == 1)) {
    std::fputs(diff.out.c_str(), stdout);
  } else {
    std::printf("%s: now the candidate's descriptor (diff is not installed to show how)\n", shown.c_str());
  }
  std::printf("deleted: %s (now %s)\n", candidate.string().c_str(), shown.c_str());
}

}  // namespace

int Promote(const CommonOptions& common, const std::string& id, bool force) {
  auto config = ResolveConfig(common);
  if (!config) return Refuse("the config does not load: " + config.error().front().ToString());
  auto loaded = LoadRegistry(common, std::move(*config));
  const Skill* skill = loaded.registry->FindSkill(id);
  if (skill == nullptr) {
    auto why = loaded.registry->FailedSkill(id);
    return Refuse(why ? "skill \"" + id + "\" did not load: " + *why
                      : "unknown skill \"" + id + "\"" + DidYouMean(loaded.registry->SimilarSkillIds(id)));
  }
  if (!skill->rollout || !skill->candidate) return Refuse("skill \"" + id + "\" has no rollout to promote");
  auto book = OpenRolloutState(common, loaded.registry->config())->Read(*loaded.registry);
  if (!book) return 3;
  const rollout::RolloutStatus status = book->Status(*skill->rollout);
  if (status.state != rollout::State::kReady && !force) {
    return Refuse("the rollout of \"" + id + "\" is " + std::string(rollout::StateName(status.state)) +
                  ", not ready (`skillrunner rollout status " + id + "` says why; --force promotes it anyway)");
  }
  const fs::path stable_file = skill->file;
  const fs::path candidate_file = skill->rollout->candidate_file;
  auto text = ReadFileText(candidate_file);
  if (!text) return Refuse("cannot read " + candidate_file.string());
  PrintDiff(stable_file, candidate_file);
  if (!WriteWhole(stable_file, *text)) return Refuse("cannot write " + stable_file.string());
  std::error_code ec;
  fs::remove(candidate_file, ec);
  if (ec) return Refuse("cannot remove " + candidate_file.string() + ": " + ec.message());
  std::printf("promoted %s to version %d: commit these changes, then reload serve\n", id.c_str(),
              skill->candidate->version);
  return 0;
}

}  // namespace skillrunner::cli
