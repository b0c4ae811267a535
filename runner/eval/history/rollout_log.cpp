#include "runner/eval/history/rollout_log.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

#include "runner/eval/history/history_schema.h"
#include "runner/eval/history/sql_db.h"
#include "runner/eval/history/sql_open.h"

namespace skillrunner::eval {
namespace json = boost::json;

namespace {

constexpr int kBusyTimeoutMs = 30'000;

Result<void> Write(sql::Db& db, const RolloutPoint& p) {
  auto done = db.Query(
      "INSERT INTO rollout_points (rollout, skill, stable_version, candidate_version, at, kind, replica, state, "
      "traffic, reason, alpha, tau, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
      {sql::Text(p.rollout), sql::Text(p.skill), sql::Int(std::int64_t{p.stable_version}),
       sql::Int(std::int64_t{p.candidate_version}), sql::Text(p.at), sql::Text(p.kind), sql::Text(p.replica),
       sql::Text(p.state), sql::Real(p.traffic), sql::Text(p.reason), sql::Real(p.alpha), sql::Real(p.tau),
       sql::Text(json::serialize(p.status))});
  if (!done) return std::unexpected(std::move(done.error()));
  return {};
}

Result<void> Write(sql::Db& db, const RolloutSample& s) {
  sql::Value pass = s.pass ? sql::Int(std::int64_t{*s.pass ? 1 : 0}) : sql::Value();
  auto done = db.Query(
      "INSERT INTO rollout_samples (rollout, skill, arm, version, at, replica, pass, sample) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
      {sql::Text(s.rollout), sql::Text(s.skill), sql::Text(s.arm), sql::Int(std::int64_t{s.version}), sql::Text(s.at),
       sql::Text(s.replica), pass, sql::Text(json::serialize(s.sample))});
  if (!done) return std::unexpected(std::move(done.error()));
  return {};
}

}  // namespace

struct RolloutLog::Impl {
  using Item = std::variant<RolloutPoint, RolloutSample>;

  std::unique_ptr<sql::Db> db;
  std::size_t capacity;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Item> queue;
  bool stopping = false;
  std::atomic<std::int64_t> dropped{0}, failed{0};
  std::thread thread;

  void Push(Item item) {
    {
      std::lock_guard lock(mutex);
      if (queue.size() >= capacity) {
        ++dropped;
        return;
      }
      queue.push_back(std::move(item));
    }
    wake.notify_one();
  }

  // Writes until stopped and drained, one item at a time (each its own statement: a rollout's
  // few rows a second need no batching).
  void Run() {
    std::unique_lock lock(mutex);
    while (true) {
      wake.wait(lock, [this] { return stopping || !queue.empty(); });
      if (queue.empty()) return;
      Item item = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      auto written = std::visit([this](const auto& one) { return Write(*db, one); }, item);
      if (!written && failed++ % 100 == 0) {
        spdlog::warn("rollout history: cannot write to {}: {} ({} item(s) lost so far)", db->name(),
                     written.error().message, failed.load());
      }
      lock.lock();
    }
  }
};

RolloutLog::RolloutLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->Run(); });
}

RolloutLog::~RolloutLog() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  impl_->thread.join();
}

Result<std::unique_ptr<RolloutLog>> RolloutLog::Open(const std::string& location, std::size_t capacity) {
  const std::string context = "cannot open eval history " + sql::DisplayName(location);
  auto db = sql::Open(location, false, kBusyTimeoutMs);
  if (!db) return Fail(std::move(db.error()), context);
  if (auto migrated = MigrateHistory(**db); !migrated) return Fail(std::move(migrated.error()), context);
  auto impl = std::make_unique<Impl>();
  impl->db = std::move(*db);
  impl->capacity = capacity;
  return std::unique_ptr<RolloutLog>(new RolloutLog(std::move(impl)));
}

void RolloutLog::Add(RolloutPoint point) { impl_->Push(std::move(point)); }
void RolloutLog::Add(RolloutSample sample) { impl_->Push(std::move(sample)); }
std::int64_t RolloutLog::dropped() const { return impl_->dropped.load(); }
std::int64_t RolloutLog::failed() const { return impl_->failed.load(); }

}  // namespace skillrunner::eval
