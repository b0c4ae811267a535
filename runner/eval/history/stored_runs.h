#pragma once

// An earlier run's records, found by its folder or by its id in the history
// (whose summaries say where each run's folder is): what --rejudge-from and
// `eval compare` read (design.md §9.5).

#include <boost/json/object.hpp>
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::eval {

struct StoredRun {
  std::string run_id;
  std::string suite;
  std::filesystem::path folder;
  std::vector<boost::json::object> records;
};

// `from` is a run folder (with run.json and results.jsonl) or a run id of
// `history_file`. Errors say which and why: CONFIG_INVALID when `from` names
// no run this can read (neither a folder nor a run id, no folder on record,
// no records), else the history's or the files' own.
Result<StoredRun> LoadStoredRun(const std::string& from, const std::filesystem::path& history_file);

}  // namespace skillrunner::eval
