#include "runner/eval/history/response_cache.h"

#include <boost/json/serialize.hpp>
#include <charconv>

#include "runner/eval/history/sqlite_db.h"
#include "services/common/clock.h"
#include "services/common/digest.h"

namespace skillrunner::eval {
namespace {

constexpr int kBusyTimeoutMs = 30'000;

std::int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(RealClock().WallNow().time_since_epoch()).count();
}

}  // namespace

// The connection and its two statements, prepared once when the cache opens.
struct ResponseCache::Impl {
  Impl(sqlite::Database database, sqlite::Statement get_statement, sqlite::Statement put_statement)
      : db(std::move(database)), get(std::move(get_statement)), put(std::move(put_statement)) {}
  std::mutex mutex;
  sqlite::Database db;
  sqlite::Statement get;
  sqlite::Statement put;
};

ResponseCache::ResponseCache(std::unique_ptr<Impl> impl, std::filesystem::path file,
                             std::optional<std::chrono::seconds> ttl, CacheMode mode)
    : impl_(std::move(impl)), file_(std::move(file)), ttl_(ttl), mode_(mode) {}

ResponseCache::~ResponseCache() = default;

Result<std::unique_ptr<ResponseCache>> ResponseCache::Open(const std::filesystem::path& file,
                                                           std::optional<std::chrono::seconds> ttl, CacheMode mode) {
  const std::string context = "cannot open the response cache " + file.string();
  auto db = sqlite::Database::Open(file, kBusyTimeoutMs);
  if (!db) return Fail(std::move(db.error()), context);
  for (const char* sql : {"PRAGMA journal_mode = WAL",
                          "CREATE TABLE IF NOT EXISTS responses (key_hash TEXT PRIMARY KEY NOT NULL, "
                          "request TEXT NOT NULL, answer TEXT NOT NULL, stored_at INTEGER NOT NULL)"}) {
    if (auto done = db->Exec(sql); !done) return Fail(std::move(done.error()), context);
  }
  auto get = db->Prepare("SELECT request, answer, stored_at FROM responses WHERE key_hash = ?1");
  if (!get) return Fail(std::move(get.error()), context);
  auto put =
      db->Prepare("INSERT OR REPLACE INTO responses (key_hash, request, answer, stored_at) VALUES (?1, ?2, ?3, ?4)");
  if (!put) return Fail(std::move(put.error()), context);
  auto impl = std::make_unique<Impl>(std::move(*db), std::move(*get), std::move(*put));
  return std::unique_ptr<ResponseCache>(new ResponseCache(std::move(impl), file, ttl, mode));
}

std::optional<std::string> ResponseCache::Get(const std::string& key) {
  if (mode_ == CacheMode::kRefresh) {
    ++misses_;
    return std::nullopt;
  }
  std::lock_guard lock(impl_->mutex);
  sqlite::Statement& get = impl_->get;
  get.Bind(1, std::string_view(Sha256Hex(key)));
  auto row = get.Step();
  std::optional<std::string> answer;
  if (row && *row && get.Text(0) == key && (!ttl_ || NowSeconds() - get.Int(2) <= ttl_->count())) {
    answer = get.Text(1);
  }
  get.Reset();
  ++(answer ? hits_ : misses_);
  return answer;
}

void ResponseCache::Put(const std::string& key, const std::string& value) {
  std::lock_guard lock(impl_->mutex);
  sqlite::Statement& put = impl_->put;
  put.Bind(1, std::string_view(Sha256Hex(key)));
  put.Bind(2, std::string_view(key));
  put.Bind(3, std::string_view(value));
  put.Bind(4, NowSeconds());
  (void)put.Run();  // a cache that cannot write only costs the next run its hits
}

std::optional<std::string> ResponseCache::MissRefusal(const std::string& key) {
  if (mode_ != CacheMode::kReplay) return std::nullopt;
  return std::string(kCacheMissPrefix) + Sha256Hex(key);
}

std::string_view CacheModeName(CacheMode mode) {
  switch (mode) {
    case CacheMode::kReadWrite:
      return "read-write";
    case CacheMode::kReplay:
      return "replay";
    case CacheMode::kRefresh:
      return "refresh";
  }
  return "read-write";
}

std::optional<CacheMode> ParseCacheMode(std::string_view name) {
  for (CacheMode mode : {CacheMode::kReadWrite, CacheMode::kReplay, CacheMode::kRefresh}) {
    if (CacheModeName(mode) == name) return mode;
  }
  return std::nullopt;
}

std::vector<std::string> CacheMissesIn(const boost::json::object& record) {
  const std::string text = boost::json::serialize(record);
  std::vector<std::string> hashes;
  constexpr std::size_t kHexDigits = 64;
  for (std::size_t at = text.find(kCacheMissPrefix); at != std::string::npos;
       at = text.find(kCacheMissPrefix, at + 1)) {
    const std::string_view hash = std::string_view(text).substr(at + kCacheMissPrefix.size(), kHexDigits);
    if (hash.size() != kHexDigits || hash.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
    if (std::find(hashes.begin(), hashes.end(), hash) == hashes.end()) hashes.emplace_back(hash);
  }
  return hashes;
}

Result<std::chrono::seconds> ParseTtl(std::string_view text) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n <= 0) {
    return Fail(ErrorCode::kConfigInvalid, "expected a positive number with s, m, h or d, e.g. 7d");
  }
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "m") scale = 60;
  if (unit == "h") scale = 3600;
  if (unit == "d") scale = 86400;
  if (scale == 0) {
    return Fail(ErrorCode::kConfigInvalid, "unknown unit \"" + std::string(unit) + "\" (expected s, m, h or d)");
  }
  return std::chrono::seconds(n * scale);
}

}  // namespace skillrunner::eval
