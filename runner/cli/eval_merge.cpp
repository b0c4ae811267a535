// `skillrunner eval merge --out DIR SRC...`: shard folders into one run.
#include <boost/json/object.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

#include "runner/cli/eval_command.h"
#include "runner/cli/eval_support.h"
#include "runner/eval/case_outcome.h"
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

}  // namespace

int MergeEval(const CommonOptions& common, const EvalOptions& options) {
  if (options.out.empty()) return Fail("--out DIR is required");
  std::vector<ShardRun> shards;
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

  std::error_code ec;
  fs::create_directories(options.out, ec);
  if (ec) return Fail("cannot create " + options.out + ": " + ec.message());
  fs::path results_file = fs::path(options.out) / "results.jsonl";
  if (fs::file_size(results_file, ec) > 0 && !ec) return Fail(options.out + " already holds a run (results.jsonl)");
  bool same_run = std::all_of(shards.begin(), shards.end(),
                              [&](const ShardRun& s) { return s.meta.run_id == shards.front().meta.run_id; });
  eval::RunMeta meta;
  auto now = std::chrono::system_clock::now();
  meta.run_id = same_run ? shards.front().meta.run_id : eval::NewRunId(now);
  meta.suite = loaded->suite.id;
  meta.suite_file = fs::absolute(suite_file).lexically_normal().string();
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
