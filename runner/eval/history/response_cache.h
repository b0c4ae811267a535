#pragma once

// design.md §9.5 `eval --cache [FILE]`: provider answers kept in SQLite (default
// next to the history), keyed by the SHA-256 of the request's identity (the
// identity itself is stored too and compared, so a hash collision is a miss),
// with an optional time to live. Counts its hits and misses. Thread-safe.

#include <atomic>
#include <boost/json/object.hpp>
#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"
#include "services/common/response_store.h"

namespace skillrunner::eval {

// design.md §10.1 `--cache-mode`: read-write (answers from the cache, misses
// asked and stored), replay (answers only from the cache: a miss is refused,
// never sent), refresh (every request asked again and stored).
enum class CacheMode { kReadWrite, kReplay, kRefresh };

// "read-write" | "replay" | "refresh"
std::string_view CacheModeName(CacheMode mode);
std::optional<CacheMode> ParseCacheMode(std::string_view name);

// The text a replay miss fails with, followed by the request's SHA-256
// (hex); CacheMissesIn finds it again in a results record.
inline constexpr std::string_view kCacheMissPrefix = "cache miss: request sha256:";

class ResponseCache : public ResponseStore {
 public:
  // Opens or creates the file. `ttl`: answers older than this are misses.
  // Errors are INTERNAL (SQLite's), naming the file.
  static Result<std::unique_ptr<ResponseCache>> Open(const std::filesystem::path& file,
                                                     std::optional<std::chrono::seconds> ttl,
                                                     CacheMode mode = CacheMode::kReadWrite);
  ~ResponseCache() override;

  // refresh: always nullopt (a miss), without reading the file.
  std::optional<std::string> Get(const std::string& key) override;
  void Put(const std::string& key, const std::string& value) override;
  // replay: "cache miss: request sha256:<hex>"; otherwise nullopt.
  std::optional<std::string> MissRefusal(const std::string& key) override;

  CacheMode mode() const { return mode_; }

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Impl;
  ResponseCache(std::unique_ptr<Impl> impl, std::filesystem::path file, std::optional<std::chrono::seconds> ttl,
                CacheMode mode);
  std::unique_ptr<Impl> impl_;
  std::filesystem::path file_;
  std::optional<std::chrono::seconds> ttl_;
  CacheMode mode_;
  std::atomic<std::uint64_t> hits_{0}, misses_{0};
};

// The request hashes of every replay miss named in a results.jsonl record
// (its error, judge error or attempts), each once, in order of appearance.
std::vector<std::string> CacheMissesIn(const boost::json::object& record);

// "90", "90s", "30m", "12h", "7d" -> seconds; an error (CONFIG_INVALID: the
// text is a flag's) names what is wrong.
Result<std::chrono::seconds> ParseTtl(std::string_view text);

}  // namespace skillrunner::eval
