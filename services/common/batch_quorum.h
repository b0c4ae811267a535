#pragma once

// When nothing more can join a batch round (design.md §10.6). An eval in batch
// mode says how many of its cases are running and when each finishes; each
// batching provider says when a case starts and stops waiting on a batch
// (gathered or sent). Once every running case waits, no request can come
// until an answer does, so every provider sends the round it is gathering at
// once instead of after `send_after`. A case counts once however many of its
// requests wait (a skill's parallel steps, a gate's judges).

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace skillrunner {

class BatchQuorum {
 public:
  using Flush = std::function<void()>;

  // `flush` sends the caller's gathered round; it is called without any lock
  // of this held, and must be safe to call with nothing gathered.
  void OnAllWaiting(Flush flush);

  // The eval's cases still running: set once before they start, then one
  // less as each finishes.
  void SetRunning(std::size_t cases);
  void CaseFinished();

  // A request of case `key` waits on a batch / got its answer. Waiting
  // only counts: the caller puts the request in its round, then Checks.
  void Waiting(const void* key);
  void Answered(const void* key);

  // Calls every flush when every running case waits.
  void Check();

 private:
  // The flushes to call now, or none.
  std::vector<Flush> DueLocked() const;
  static void Run(const std::vector<Flush>& flushes);

  mutable std::mutex mutex_;
  std::size_t running_ = 0;
  std::map<const void*, int> waiting_;  // requests waiting, by case
  std::vector<Flush> flushes_;
};

}  // namespace skillrunner
