// MergeRuns (orchestrate.h): `eval merge --out DIR SRC...`, shard folders into
// one run.
#include <algorithm>
#include <map>

#include "runner/eval/dir_lock.h"
#include "runner/eval/eval_run.h"
#include "runner/eval/finish_run.h"
#include "runner/eval/orchestrate.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/results_log.h"
#include "services/common/clock.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

int Failed(const Say& say, const std::string& message) {
  say("skillrunner eval merge: " + message);
  return kRunError;
}

int Failed(const Say& say, const Error& error) { return Failed(say, error.message); }

struct ShardRun {
  fs::path dir;
  RunMeta meta;
  std::vector<json::object> records;
};

// The shard folders, read; every case key in exactly one of them.
struct ReadShards {
  std::vector<ShardRun> shards;
  std::map<std::string, fs::path> seen;  // case key -> the shard that has it
  std::vector<std::string> torn;         // notes on torn last lines
};

// Sources that do not fit together are CONFIG_INVALID (the arguments are wrong).
Result<ReadShards> ReadShardFolders(const std::vector<fs::path>& sources) {
  ReadShards out;
  for (const auto& source : sources) {
    ShardRun shard{source, {}, {}};
    auto meta = ReadRunMeta(shard.dir / "run.json");
    if (!meta) return std::unexpected(std::move(meta.error()));
    shard.meta = std::move(*meta);
    if (!out.shards.empty() && shard.meta.suite != out.shards.front().meta.suite) {
      return Fail(ErrorCode::kConfigInvalid, source.string() + " holds suite \"" + shard.meta.suite + "\" but " +
                                                 out.shards.front().dir.string() + " holds \"" +
                                                 out.shards.front().meta.suite + "\"");
    }
    auto results = ReadResults(shard.dir / "results.jsonl", false);
    if (!results) return std::unexpected(std::move(results.error()));
    if (results->torn_bytes > 0) {
      out.torn.push_back((shard.dir / "results.jsonl").string() + " ends with a torn line (" +
                         std::to_string(results->torn_bytes) + " bytes, left out)");
    }
    for (auto& record : results->records) {
      std::string key = CaseKey(record);
      auto [it, inserted] = out.seen.emplace(key, shard.dir);
      if (!inserted) {
        return Fail(ErrorCode::kConfigInvalid, "case " + key + " is in both " + it->second.string() + " and " +
                                                   source.string() + " (overlapping shards, or the same shard twice)");
      }
      shard.records.push_back(std::move(record));
    }
    out.shards.push_back(std::move(shard));
  }
  return out;
}

// The sources must be the shards 0..N-1 of one N, each exactly once (a
// folder of an unsharded run counts as 0/1); CONFIG_INVALID if not.
Result<void> CheckShardSet(const std::vector<ShardRun>& shards) {
  std::map<int, const ShardRun*> by_index;
  std::optional<int> count;
  for (const ShardRun& s : shards) {
    Shard shard;
    if (s.meta.shard) {
      auto parsed = ParseShard(*s.meta.shard);
      if (!parsed) return Fail(ErrorCode::kInternal, s.dir.string() + "/run.json: bad shard \"" + *s.meta.shard + "\"");
      shard = *parsed;
    }
    if (count && *count != shard.count) {
      return Fail(ErrorCode::kConfigInvalid, s.dir.string() + " is shard " + shard.ToString() + " but " +
                                                 shards.front().dir.string() + " is one of " + std::to_string(*count) +
                                                 " shards: the sources must be the shards of one split");
    }
    count = shard.count;
    auto [it, inserted] = by_index.emplace(shard.index, &s);
    if (!inserted) {
      return Fail(ErrorCode::kConfigInvalid, "shard " + shard.ToString() + " is given twice: " +
                                                 it->second->dir.string() + " and " + s.dir.string());
    }
  }
  if (!count) return Fail(ErrorCode::kConfigInvalid, "no shard folders given");
  std::string missing;
  for (int i = 0; i < *count; ++i) {
    if (by_index.contains(i)) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(*count);
  }
  if (!missing.empty()) {
    return Fail(ErrorCode::kConfigInvalid, "shard(s) " + missing + " missing: merge needs every shard of the split");
  }
  for (const ShardRun& s : shards) {
    if (s.meta.plan_hash && shards.front().meta.plan_hash && *s.meta.plan_hash != *shards.front().meta.plan_hash) {
      return Fail(ErrorCode::kConfigInvalid,
                  s.dir.string() + " and " + shards.front().dir.string() +
                      " ran different plans of the suite (cases, repeats or datasets differ)");
    }
  }
  return {};
}

// Every case the suite plans must be in exactly one shard (duplicates were
// refused while reading); the first few missing keys are named (CONFIG_INVALID).
Result<void> CheckCoverage(const Suite& suite, const std::vector<ShardRun>& shards,
                           const std::map<std::string, fs::path>& seen) {
  constexpr std::size_t kShown = 5;
  std::vector<std::string> missing;
  std::vector<std::string> planned = PlannedKeys(suite);
  for (const std::string& key : planned) {
    if (!seen.contains(key)) missing.push_back(key);
  }
  if (missing.empty()) return {};
  std::string listed;
  for (std::size_t i = 0; i < std::min(kShown, missing.size()); ++i) listed += (i ? ", " : "") + missing[i];
  if (missing.size() > kShown) listed += ", ...";
  std::string plan_note;
  if (!shards.empty() && shards.front().meta.plan_hash && *shards.front().meta.plan_hash != PlanHash(suite)) {
    plan_note = " (the suite's cases changed since the shards ran)";
  }
  return Fail(ErrorCode::kConfigInvalid, std::to_string(missing.size()) + " of the suite's " +
                                             std::to_string(planned.size()) + " planned case(s) are in no shard" +
                                             plan_note + ": " + listed +
                                             "; finish the incomplete shard(s) with --resume, then merge again");
}

// run.json of the merged run: the shards' run id when they share one.
RunMeta MergedMeta(const std::vector<ShardRun>& shards, const Suite& suite, const std::string& suite_file) {
  bool same_run = std::all_of(shards.begin(), shards.end(),
                              [&](const ShardRun& s) { return s.meta.run_id == shards.front().meta.run_id; });
  RunMeta meta;
  meta.run_id = same_run ? shards.front().meta.run_id : NewRunId(RealClock().WallNow());
  meta.suite = suite.id;
  meta.suite_file = fs::absolute(suite_file).lexically_normal().string();
  meta.plan_hash = PlanHash(suite);
  meta.started_at = shards.front().meta.started_at;
  for (const auto& s : shards) {
    meta.started_at = std::min(meta.started_at, s.meta.started_at);
    if (!meta.git_ref) meta.git_ref = s.meta.git_ref;  // the shards of one night share a commit
  }
  return meta;
}

Result<void> WriteRecords(const fs::path& file, const std::vector<json::object>& records) {
  auto writer = ResultsWriter::Open(file);
  if (!writer) return std::unexpected(std::move(writer.error()));
  for (const auto& record : records) {
    if (auto appended = (*writer)->Append(record); !appended) return appended;
  }
  return (*writer)->Flush();
}

}  // namespace

int MergeRuns(const MergeRequest& request, const SuiteLoader& load_suite, const Say& say) {
  auto read = ReadShardFolders(request.sources);
  if (!read) return Failed(say, read.error());
  if (read->shards.empty()) return Failed(say, "no shard folders given");
  std::vector<ShardRun>& shards = read->shards;
  std::string suite_file = request.suite_file.empty() ? shards.front().meta.suite_file : request.suite_file;
  auto loaded = load_suite(suite_file);
  if (!loaded) return kRunError;
  if (loaded->suite.id != shards.front().meta.suite) {
    return Failed(say, suite_file + " is suite \"" + loaded->suite.id + "\" but the shards ran \"" +
                           shards.front().meta.suite + "\"");
  }
  for (const auto& note : read->torn) say("skillrunner eval merge: " + note);
  if (auto checked = CheckShardSet(shards); !checked) return Failed(say, checked.error());
  if (auto covered = CheckCoverage(loaded->suite, shards, read->seen); !covered) return Failed(say, covered.error());

  RunMeta meta = MergedMeta(shards, loaded->suite, suite_file);
  if (!request.git_ref.empty()) meta.git_ref = request.git_ref;
  if (auto baseline = CheckBaselineFirst(request.finish, loaded->suite, meta.run_id, say); !baseline) {
    return Failed(say, baseline.error().message + " (checked before merging)");
  }
  const fs::path& out = request.finish.out;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Failed(say, "cannot create " + out.string() + ": " + ec.message());
  auto lock = DirLock::Acquire(out);
  if (!lock) return Failed(say, lock.error());
  if (fs::file_size(out / "results.jsonl", ec) > 0 && !ec) {
    return Failed(say, out.string() + " already holds a run (results.jsonl)");
  }
  if (auto written = WriteRunMeta(out / "run.json", meta); !written) return Failed(say, written.error());
  std::vector<json::object> records;
  for (auto& s : shards) {
    for (auto& r : s.records) records.push_back(std::move(r));
  }
  SortRecords(loaded->suite, records);
  if (auto written = WriteRecords(out / "results.jsonl", records); !written) return Failed(say, written.error());
  SummaryHeader header =
      MakeSummaryHeader(meta, RealClock().WallNow(), loaded->suite.concurrency.value_or(kDefaultConcurrency));
  header.shard.reset();
  say("skillrunner eval merge: " + std::to_string(records.size()) + " record(s) from " + std::to_string(shards.size()) +
      " shard folder(s) into run " + meta.run_id);
  return FinishEval(loaded->suite, std::move(header), std::move(records), request.finish, say);
}

}  // namespace skillrunner::eval
