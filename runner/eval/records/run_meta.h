#pragma once

// DIR/run.json: what identifies a run across --resume and merge.
//   {"run_id", "suite", "suite_file", "started_at", "shard"?, "plan_hash"?, "git_ref"?}
// plan_hash (PlanHash) identifies the cases the suite planned when the run
// began; --resume refuses a folder whose plan differs from the suite's now.

#include <boost/json/object.hpp>
#include <chrono>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>

#include "services/common/error.h"
#include "services/common/iso_time.h"

namespace skillrunner::eval {

struct RunMeta {
  std::string run_id;
  std::string suite;
  std::string suite_file;
  std::string started_at;            // ISO-8601 UTC
  std::optional<std::string> shard;  // "I/N"
  std::optional<std::string> plan_hash;
  // The commit the run was made at (eval --git-ref, else GITHUB_SHA or CI_COMMIT_SHA).
  std::optional<std::string> git_ref;

  boost::json::object ToJson() const;
};

// Errors (INTERNAL) name the file and what is wrong with it.
Result<RunMeta> ReadRunMeta(const std::filesystem::path& file);
Result<void> WriteRunMeta(const std::filesystem::path& file, const RunMeta& meta);

// "20240501T020304Z-1a2b3c": sortable by time, unique enough across shards.
std::string NewRunId(std::chrono::system_clock::time_point now);

}  // namespace skillrunner::eval
