// `skillrunner eval merge --out DIR SRC...`: shard folders into one run.
#include <boost/json/object.hpp>

#include <algorithm>
#include <cstdio>
#include <expected>
#include <map>
#include <optional>

#include "runner/cli/eval_command.h"
#include "runner/cli/eval_support.h"
#include "runner/eval/case_outcome.h"
#include "runner/eval/dir_lock.h"
#include "runner/eval/eval_run.h"
#include "runner/eval/shard.h"
#include "runner/eval/results_log.h"
#include "runner/eval/run_meta.h"

namespace skillrunner::cli {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "skillrunner eval merge: %s\n", message.c_str());
  return kEvalRunError;
}

struct ShardRun {
  fs::path dir;
  eval::RunMeta meta;
  std::vector<json::object> records;
};

// The sources must be the shards 0..N-1 of one N, each exactly once (a
// folder of an unsharded run counts as 0/1).
std::expected<void, std::string> CheckShardSet(const std::vector<ShardRun>& shards) {
  std::map<int, const ShardRun*> by_index;
  std::optional<int> count;
  for (const ShardRun& s : shards) {
    eval::Shard shard;
    if (s.meta.shard) {
      auto parsed = eval::ParseShard(*s.meta.shard);
      if (!parsed) return std::unexpected(s.dir.string() + "/run.json: bad shard \"" + *s.meta.shard + "\"");
      shard = *parsed;
    }
    if (count && *count != shard.count) {
      return std::unexpected(s.dir.string() + " is shard " + shard.ToString() + " but " +
                             shards.front().dir.string() + " is one of " + std::to_string(*count) +
                             " shards: the sources must be the shards of one split");
    }
    count = shard.count;
    auto [it, inserted] = by_index.emplace(shard.index, &s);
    if (!inserted) {
      return std::unexpected("shard " + shard.ToString() + " is given twice: " + it->second->dir.string() + " and " +
                             s.dir.string());
    }
  }
  if (!count) return std::unexpected("no shard folders given");
  std::string missing;
  for (int i = 0; i < *count; ++i) {
    if (by_index.contains(i)) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(*count);
  }
  if (!missing.empty()) return std::unexpected("shard(s) " + missing + " missing: merge needs every shard of the split");
  for (const ShardRun& s : shards) {
    if (s.meta.plan_hash && shards.front().meta.plan_hash && *s.meta.plan_hash != *shards.front().meta.plan_hash) {
      return std::unexpected(s.dir.string() + " and " + shards.front().dir.string() +
                             " ran different plans of the suite (cases, repeats or datasets differ)");
    }
  }
  return {};
}

// Every case the suite plans must be in exactly one shard (duplicates were
// refused while reading); the first few missing keys are named.
std::expected<void, std::string> CheckCoverage(const eval::Suite& suite, const std::vector<ShardRun>& shards,
                                               const std::map<std::string, fs::path>& seen) {
  constexpr std::size_t kShown = 5;
  std::vector<std::string> missing;
  std::vector<std::string> planned = eval::PlannedKeys(suite);
  for (const std::string& key : planned) {
    if (!seen.contains(key)) missing.push_back(key);
  }
  if (missing.empty()) return {};
  std::string listed;
  for (std::size_t i = 0; i < std::min(kShown, missing.size()); ++i) listed += (i ? ", " : "") + missing[i];
  if (missing.size() > kShown) listed += ", ...";
  std::string plan_note;
  if (!shards.empty() && shards.front().meta.plan_hash && *shards.front().meta.plan_hash != eval::PlanHash(suite)) {
    plan_note = " (the suite's cases changed since the shards ran)";
  }
  return std::unexpected(std::to_string(missing.size()) + " of the suite's " + std::to_string(planned.size()) +
                         " planned case(s) are in no shard" + plan_note + ": " + listed +
                         "; finish the incomplete shard(s) with --resume, then merge again");
}

}  // namespace

int MergeEval(const CommonOptions& common, const EvalOptions& options) {
  if (options.out.empty()) return Fail("--out DIR is required");
  std::vector<ShardRun> shards;
  std::vector<std::string> torn;
  std::map<std::string, fs::path> seen;  // case key -> the shard that has it
  for (const auto& source : options.merge_sources) {
    ShardRun shard{source, {}, {}};
    auto meta = eval::ReadRunMeta(shard.dir / "run.json");
    if (!meta) return Fail(meta.error());
    shard.meta = std::move(*meta);
    if (!shards.empty() && shard.meta.suite != shards.front().meta.suite) {
      return Fail(source + " holds suite \"" + shard.meta.suite + "\" but " + shards.front().dir.string() +
                  " holds \"" + shards.front().meta.suite + "\"");
    }
    auto results = eval::ReadResults(shard.dir / "results.jsonl", false);
    if (!results) return Fail(results.error());
    if (results->torn_bytes > 0) {
      torn.push_back((shard.dir / "results.jsonl").string() + " ends with a torn line (" +
                     std::to_string(results->torn_bytes) + " bytes, left out)");
    }
    for (auto& record : results->records) {
      std::string key = eval::CaseKey(record);
      auto [it, inserted] = seen.emplace(key, shard.dir);
      if (!inserted) {
        return Fail("case " + key + " is in both " + it->second.string() + " and " + source +
                    " (overlapping shards, or the same shard twice)");
      }
      shard.records.push_back(std::move(record));
    }
    shards.push_back(std::move(shard));
  }
  std::string suite_file = options.merge_suite.empty() ? shards.front().meta.suite_file : options.merge_suite;
  auto loaded = LoadSuiteForEval(common, suite_file);
  if (!loaded) return kEvalRunError;
  if (loaded->suite.id != shards.front().meta.suite) {
    return Fail(suite_file + " is suite \"" + loaded->suite.id + "\" but the shards ran \"" +
                shards.front().meta.suite + "\"");
  }

  for (const auto& note : torn) std::fprintf(stderr, "skillrunner eval merge: %s\n", note.c_str());
  if (auto checked = CheckShardSet(shards); !checked) return Fail(checked.error());
  if (auto covered = CheckCoverage(loaded->suite, shards, seen); !covered) return Fail(covered.error());

  std::error_code ec;
  fs::create_directories(options.out, ec);
  if (ec) return Fail("cannot create " + options.out + ": " + ec.message());
  auto lock = eval::DirLock::Acquire(options.out);
  if (!lock) return Fail(lock.error());
  fs::path results_file = fs::path(options.out) / "results.jsonl";
  if (fs::file_size(results_file, ec) > 0 && !ec) return Fail(options.out + " already holds a run (results.jsonl)");
  bool same_run = std::all_of(shards.begin(), shards.end(),
                              [&](const ShardRun& s) { return s.meta.run_id == shards.front().meta.run_id; });
  eval::RunMeta meta;
  auto now = std::chrono::system_clock::now();
  meta.run_id = same_run ? shards.front().meta.run_id : eval::NewRunId(now);
  meta.suite = loaded->suite.id;
  meta.suite_file = fs::absolute(suite_file).lexically_normal().string();
  meta.plan_hash = eval::PlanHash(loaded->suite);
  meta.started_at = shards.front().meta.started_at;
  for (const auto& s : shards) meta.started_at = std::min(meta.started_at, s.meta.started_at);
  if (auto written = eval::WriteRunMeta(fs::path(options.out) / "run.json", meta); !written) {
    return Fail(written.error());
  }
  std::vector<json::object> records;
  for (auto& s : shards) {
    for (auto& r : s.records) records.push_back(std::move(r));
  }
  eval::SortRecords(loaded->suite, records);
  {
    auto writer = eval::ResultsWriter::Open(results_file);
    if (!writer) return Fail(writer.error());
    for (const auto& record : records) {
      if (auto appended = (*writer)->Append(record); !appended) return Fail(appended.error());
    }
    if (auto flushed = (*writer)->Flush(); !flushed) return Fail(flushed.error());
  }
  eval::SummaryHeader header;
  header.run_id = meta.run_id;
  header.suite = meta.suite;
  header.started_at = meta.started_at;
  header.finished_at = eval::IsoUtc(now);
  if (auto started = eval::ParseIsoUtc(meta.started_at)) {
    header.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - *started).count();
  }
  header.concurrency = loaded->suite.concurrency.value_or(16);
  std::fprintf(stderr, "skillrunner eval merge: %zu record(s) from %zu shard folder(s) into run %s\n", records.size(),
               shards.size(), meta.run_id.c_str());
  return FinishEval(loaded->suite, std::move(header), std::move(records), options);
}

}  // namespace skillrunner::cli
