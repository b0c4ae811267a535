#pragma once

// One writer per eval folder: an exclusive flock(2) on DIR/.lock held for the
// whole run (or merge). A second process on the same folder gets an error at
// once instead of appending the same cases to the same results.jsonl. The
// lock goes with the process (kill -9 included), so no stale lock is left.

#include <expected>
#include <filesystem>
#include <string>

#include "services/common/error.h"

namespace skillrunner::eval {

class DirLock {
 public:
  // Locks `dir` (which must exist). Fails (INTERNAL) with "another eval is
  // writing DIR" when another process holds it, or with the system's error.
  static Result<DirLock> Acquire(const std::filesystem::path& dir);
  DirLock(DirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  ~DirLock();

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace skillrunner::eval
