#pragma once

// DIR/results.jsonl, the run's durable record: one compact JSON object per
// finished case, appended as the case finishes and fsync'd per batch (every
// kSyncEvery records or kSyncInterval, and on Flush), so a crash or kill -9
// loses at most the last batch and tears at most the last line. Every error
// here is INTERNAL (a file that cannot be read or written, or a line that is
// not a record), its message naming the file.

#include <boost/json/object.hpp>
#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "services/common/clock.h"
#include "services/common/error.h"

namespace skillrunner::eval {

class ResultsWriter {
 public:
  static constexpr std::size_t kSyncEvery = 32;
  static constexpr std::chrono::seconds kSyncInterval{1};

  // Opens `file` for appending, creating it when absent. `clock` times the
  // syncs and must outlive the writer.
  static Result<std::unique_ptr<ResultsWriter>> Open(const std::filesystem::path& file,
                                                     const Clock& clock = RealClock());
  ~ResultsWriter();  // flushes; errors are lost, so call Flush first
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // Appends one line (strings that are not valid UTF-8 get U+FFFD for the bad
  // bytes, so every line parses). A write that fails is cut back off the
  // file (ftruncate to where the line began), and every later Append is
  // refused with the first error: the file never holds a partial line in the
  // middle, and a run that lost a record stops. Thread-safe.
  Result<void> Append(const boost::json::object& record);
  // fsyncs what was appended. Thread-safe.
  Result<void> Flush();

 private:
  ResultsWriter(int fd, std::filesystem::path file, const Clock& clock)
      : fd_(fd), file_(std::move(file)), clock_(clock), last_sync_(clock.Now()) {}
  Result<void> SyncLocked();

  int fd_;
  std::filesystem::path file_;
  const Clock& clock_;
  std::mutex mutex_;
  std::size_t unsynced_ = 0;
  std::optional<Error> failed_;  // the first write error; set: Append refuses
  Clock::TimePoint last_sync_;
};

struct LoadedResults {
  std::vector<boost::json::object> records;
  std::size_t torn_bytes = 0;      // bytes of a torn last line that were cut away
  std::size_t repaired_lines = 0;  // lines kept with U+FFFD for bytes that were not UTF-8
};

// Reads a results.jsonl. A missing file is an empty run. A last line without
// its newline that is not a JSON object is a write the crash tore: it is
// dropped and, when `repair` is set, truncated away so that appends start on
// a clean line. A complete (newline-terminated) line is never "torn": one
// that is not a JSON object is an error naming file:line, wherever it is. A
// line whose only fault is invalid UTF-8 is kept, the bad bytes as U+FFFD.
Result<LoadedResults> ReadResults(const std::filesystem::path& file, bool repair);

// write(2) until all of `text` is written (EINTR retried); the error names
// `file`. Exposed for tests.
Result<void> WriteAll(int fd, std::string_view text, const std::filesystem::path& file);

// Appends `line` to `fd` (opened O_APPEND); when the write fails, truncates
// the file back to its size before the write, so no partial line stays.
// Exposed for tests.
Result<void> WriteLineOrTruncate(int fd, std::string_view line, const std::filesystem::path& file);
// Writes `text` to `file` through a temporary file and a rename, so readers
// never see half of it.
Result<void> WriteFileAtomically(const std::filesystem::path& file, std::string_view text);

}  // namespace skillrunner::eval
