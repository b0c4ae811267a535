#pragma once

// The run folder's batches.jsonl (design.md §10.6): every batch request, intent,
// batch id, resubmission and refusal, appended and synced before the step it
// records goes on (a request line before its batch is created, an intent
// before create, the batch id before the first poll), so that a restart
// after kill -9 finds every request the provider already holds. Each line is
// a JSON object with "event": request | intent | batch | resubmitted | refused.
// Thread-safe.

#include <boost/json/object.hpp>
#include <cstdio>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::providers {

class BatchJournal {
 public:
  // Opens (creating) `file` and reads what an earlier process recorded (a
  // torn last line is left out). INTERNAL when the file cannot be written.
  static Result<std::unique_ptr<BatchJournal>> Open(const std::filesystem::path& file);
  ~BatchJournal();

  // The lines recorded before this process opened the file.
  const std::vector<boost::json::object>& recorded() const { return recorded_; }
  // A new round number: one above any recorded or handed out.
  int NextRound();
  // Appends `line` and syncs it to disk; false when it could not.
  bool Append(const boost::json::object& line);
  // Appends every line, then syncs once.
  bool AppendAll(const std::vector<boost::json::object>& lines);
  const std::filesystem::path& file() const { return file_; }
  // Called with each line once it is on disk (the history records batch ids
  // this way); set before the first Append.
  void SetObserver(std::function<void(const boost::json::object&)> observer) { observer_ = std::move(observer); }

 private:
  BatchJournal(std::filesystem::path file, std::FILE* out, std::vector<boost::json::object> recorded, int last_round);

  std::filesystem::path file_;
  std::mutex mutex_;
  std::FILE* out_;
  std::vector<boost::json::object> recorded_;
  int last_round_;
  std::function<void(const boost::json::object&)> observer_;
};

}  // namespace skillrunner::providers
