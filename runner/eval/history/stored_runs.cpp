#include "runner/eval/history/stored_runs.h"

#include "runner/eval/history/history.h"
#include "runner/eval/records/results_log.h"
#include "runner/eval/records/run_meta.h"

namespace skillrunner::eval {
namespace fs = std::filesystem;

Result<StoredRun> LoadStoredRun(const std::string& from, const fs::path& history_file) {
  StoredRun run;
  run.folder = from;
  std::error_code ec;
  if (!fs::is_directory(run.folder, ec)) {
    auto history = History::Open(history_file);
    if (!history) return std::unexpected(std::move(history.error()));
    auto found = (*history)->FindRun(from);
    if (!found) return std::unexpected(std::move(found.error()));
    if (!*found) {
      return Fail(ErrorCode::kConfigInvalid,
                  "\"" + from + "\" is neither a run folder nor a run in " + history_file.string());
    }
    if ((*found)->out.empty()) {
      return Fail(ErrorCode::kConfigInvalid, "run " + from + " does not say where its results are; give its folder");
    }
    run.folder = (*found)->out;
  }
  auto meta = ReadRunMeta(run.folder / "run.json");
  if (!meta) return std::unexpected(std::move(meta.error()));
  run.run_id = meta->run_id;
  run.suite = meta->suite;
  auto results = ReadResults(run.folder / "results.jsonl", false);
  if (!results) return std::unexpected(std::move(results.error()));
  if (results->records.empty()) {
    return Fail(ErrorCode::kConfigInvalid, (run.folder / "results.jsonl").string() + " has no records");
  }
  run.records = std::move(results->records);
  return run;
}

}  // namespace skillrunner::eval
