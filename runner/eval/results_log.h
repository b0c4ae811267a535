#pragma once

// DIR/results.jsonl, the run's durable record: one compact JSON object per
// finished case, appended as the case finishes and fsync'd per batch (every
// kSyncEvery records or kSyncInterval, and on Flush), so a crash or kill -9
// loses at most the last batch and tears at most the last line.

#include <boost/json/object.hpp>
#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace skillrunner::eval {

class ResultsWriter {
 public:
  static constexpr std::size_t kSyncEvery = 32;
  static constexpr std::chrono::seconds kSyncInterval{1};

  // Opens `file` for appending, creating it when absent.
  static std::expected<std::unique_ptr<ResultsWriter>, std::string> Open(
      const std::filesystem::path& file);
  ~ResultsWriter();  // flushes; errors are lost, so call Flush first
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // Appends one line. Thread-safe.
  std::expected<void, std::string> Append(const boost::json::object& record);
  // fsyncs what was appended. Thread-safe.
  std::expected<void, std::string> Flush();

 private:
  ResultsWriter(int fd, std::filesystem::path file) : fd_(fd), file_(std::move(file)) {}
  std::expected<void, std::string> SyncLocked();

  int fd_;
  std::filesystem::path file_;
  std::mutex mutex_;
  std::size_t unsynced_ = 0;
  std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
};

struct LoadedResults {
  std::vector<boost::json::object> records;
  std::size_t torn_bytes = 0;  // bytes of a torn last line that were cut away
};

// Reads a results.jsonl. A missing file is an empty run. A last line that is
// cut short (no newline, or not a JSON object) is a write the crash tore: it
// is dropped and, when `repair` is set, truncated away so that appends start
// on a clean line. Any other bad line is an error naming file:line.
std::expected<LoadedResults, std::string> ReadResults(const std::filesystem::path& file, bool repair);

// Writes `text` to `file` through a temporary file and a rename, so readers
// never see half of it.
std::expected<void, std::string> WriteFileAtomically(const std::filesystem::path& file,
                                                     std::string_view text);

}  // namespace skillrunner::eval
