#include "runner/eval/eval_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "runner/eval/history/response_cache.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "services/common/json_text.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

std::string TaskKey(const SuiteSkill& entry, const std::string& id, int repeat) {
  return CaseKey(entry.skill->id, entry.version, id, repeat);
}

struct WorkQueue {
  WorkQueue(const std::vector<CaseTask>& t, const CaseDeps& d, ResultsWriter& w, Progress& p,
            boost::asio::io_context& i)
      : tasks(t), deps(d), writer(w), progress(p), io(i) {}
  const std::vector<CaseTask>& tasks;
  const CaseDeps& deps;
  ResultsWriter& writer;
  Progress& progress;
  boost::asio::io_context& io;
  std::atomic<std::size_t> next{0};
  std::atomic<int> active{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  RunStats stats;
};

boost::asio::awaitable<void> Worker(WorkQueue* queue) {
  while (!queue->stop.load()) {
    std::size_t index = queue->next.fetch_add(1);
    if (index >= queue->tasks.size()) break;
    const CaseTask& task = queue->tasks[index];
    json::object record;
    bool ran = false;
    try {
      record = co_await RunCase(task, queue->deps);
      ran = true;
    } catch (const std::exception& e) {
      // A bug, not a result: leave the case unrecorded so --resume retries it.
      spdlog::error("eval case {} stopped by an internal error: {}", task.key, e.what());
    }
    std::vector<std::string> misses;
    if (ran && queue->deps.replay_only) misses = CacheMissesIn(record);
    std::lock_guard lock(queue->mutex);
    if (!ran) {
      ++queue->stats.internal_errors;
      continue;
    }
    if (!misses.empty()) {
      // design.md §10.1: a replay that missed is no result; left unrecorded.
      for (const std::string& hash : misses) {
        queue->stats.cache_misses.push_back("cache miss: skill " + task.entry->label + " case " + task.eval_case->id +
                                            " request sha256:" + hash);
      }
      continue;
    }
    if (auto written = queue->writer.Append(record); !written) {
      queue->stats.write_error = written.error().message;
      queue->stop.store(true);
      break;
    }
    ++queue->stats.finished;
    queue->progress.CaseDone(OutcomeOf(record), RecordTokens(record));
  }
  // A worker with no case left is one running case fewer.
  if (queue->deps.quorum != nullptr) queue->deps.quorum->CaseFinished();
  // The last worker out stops the context: idle provider connections would
  // otherwise keep it running.
  if (queue->active.fetch_sub(1) == 1) queue->io.stop();
}

}  // namespace

std::vector<CaseTask> PlanCases(const Suite& suite, const PlanOptions& options, const std::set<std::string>& done) {
  std::vector<CaseTask> tasks;
  for (const SuiteSkill& entry : suite.skills) {
    std::vector<CaseTask> all;
    for (const EvalCase& c : entry.cases) {
      for (int r = 1; r <= suite.repeats; ++r) {
        int repeat = suite.repeats > 1 ? r : 0;
        all.push_back(CaseTask{&entry, &c, repeat, 0, TaskKey(entry, c.id, repeat), nullptr, ""});
      }
    }
    if (options.rejudge > 0) {
      std::vector<std::pair<std::uint64_t, std::size_t>> order;
      for (std::size_t i = 0; i < all.size(); ++i) order.emplace_back(StableHash(all[i].key), i);
      std::sort(order.begin(), order.end());
      for (std::size_t i = 0; i < std::min(options.rejudge_sample, order.size()); ++i) {
        all[order[i].second].rejudges = options.rejudge;
      }
    }
    for (auto& task : all) {
      if (options.shard.Contains(task.key) && !done.contains(task.key)) tasks.push_back(std::move(task));
    }
  }
  return tasks;
}

std::vector<std::string> PlannedKeys(const Suite& suite) {
  std::vector<std::string> keys;
  for (const CaseTask& task : PlanCases(suite, PlanOptions{}, {})) keys.push_back(task.key);
  return keys;
}

std::string PlanHash(const Suite& suite) {
  std::string text;
  for (const CaseTask& task : PlanCases(suite, PlanOptions{}, {})) {
    text += task.key;
    text += '\n';
    text += CompactJson(task.eval_case->input);
    text += '\n';
    text += task.eval_case->expected ? CompactJson(*task.eval_case->expected) : std::string("-");
    text += '\n';
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(StableHash(text)));
  return hex;
}

RunStats RunCases(const std::vector<CaseTask>& tasks, const CaseDeps& deps, ResultsWriter& writer, Progress& progress,
                  boost::asio::io_context& io, int concurrency, int threads) {
  WorkQueue queue(tasks, deps, writer, progress, io);
  if (tasks.empty()) return queue.stats;
  int workers =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(1, concurrency)), tasks.size()));
  queue.active.store(workers);
  if (deps.quorum != nullptr) deps.quorum->SetRunning(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) {
    // Each worker on its own strand: io runs on several threads, and a case's
    // handlers (SkillRunner::Invoke's parallel groups and their cancellation
    // included) must never run concurrently with each other.
    boost::asio::co_spawn(boost::asio::make_strand(io), Worker(&queue), [](std::exception_ptr e) {
      if (e) spdlog::critical("eval worker stopped by an internal error");
    });
  }
  std::vector<std::thread> pool;
  for (int i = 1; i < std::max(1, threads); ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  if (auto flushed = writer.Flush(); !flushed && queue.stats.write_error.empty()) {
    queue.stats.write_error = flushed.error().message;
  }
  return queue.stats;
}

}  // namespace skillrunner::eval
