#pragma once

// DESIGN 9.5 `eval --cache [FILE]`: provider answers kept in SQLite (default
// next to the history), keyed by the SHA-256 of the request's identity (the
// identity itself is stored too and compared, so a hash collision is a miss),
// with an optional time to live. Counts its hits and misses. Thread-safe.

#include <atomic>
#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "services/common/response_store.h"

namespace skillrunner::eval {

class ResponseCache : public ResponseStore {
 public:
  // Opens or creates the file. `ttl`: answers older than this are misses.
  static std::expected<std::unique_ptr<ResponseCache>, std::string> Open(
      const std::filesystem::path& file, std::optional<std::chrono::seconds> ttl);
  ~ResponseCache() override;

  std::optional<std::string> Get(const std::string& key) override;
  void Put(const std::string& key, const std::string& value) override;

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Impl;
  ResponseCache(std::unique_ptr<Impl> impl, std::filesystem::path file, std::optional<std::chrono::seconds> ttl);
  std::unique_ptr<Impl> impl_;
  std::filesystem::path file_;
  std::optional<std::chrono::seconds> ttl_;
  std::atomic<std::uint64_t> hits_{0}, misses_{0};
};

// "90", "90s", "30m", "12h", "7d" -> seconds; an error names what is wrong.
std::expected<std::chrono::seconds, std::string> ParseTtl(std::string_view text);

}  // namespace skillrunner::eval
