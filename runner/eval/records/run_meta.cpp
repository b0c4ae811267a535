#include "runner/eval/records/run_meta.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include "runner/eval/records/results_log.h"
#include "services/common/json_text.h"

namespace skillrunner::eval {
namespace json = boost::json;

json::object RunMeta::ToJson() const {
  json::object out{{"run_id", run_id}, {"suite", suite}, {"suite_file", suite_file}, {"started_at", started_at}};
  if (shard) out["shard"] = *shard;
  if (plan_hash) out["plan_hash"] = *plan_hash;
  if (git_ref) out["git_ref"] = *git_ref;
  return out;
}

Result<RunMeta> ReadRunMeta(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail(ErrorCode::kInternal, "cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  json::value value = json::parse(text.str(), ec);
  auto field = [&](std::string_view key) -> std::optional<std::string> {
    const json::value* v = value.is_object() ? value.as_object().if_contains(key) : nullptr;
    if (!v || !v->is_string()) return std::nullopt;
    return std::string(v->as_string());
  };
  RunMeta meta;
  auto run_id = field("run_id");
  auto suite = field("suite");
  auto started = field("started_at");
  if (ec || !run_id || !suite || !started) {
    return Fail(ErrorCode::kInternal, file.string() + " is not a run.json (needs run_id, suite and started_at)");
  }
  meta.run_id = *run_id;
  meta.suite = *suite;
  meta.started_at = *started;
  meta.suite_file = field("suite_file").value_or("");
  meta.shard = field("shard");
  meta.plan_hash = field("plan_hash");
  meta.git_ref = field("git_ref");
  return meta;
}

Result<void> WriteRunMeta(const std::filesystem::path& file, const RunMeta& meta) {
  return WriteFileAtomically(file, PrettyJson(meta.ToJson()) + "\n");
}

std::string NewRunId(std::chrono::system_clock::time_point now) {
  std::string iso = IsoUtc(now);  // 2024-05-01T02:03:04.567Z
  std::string compact;
  for (char c : iso.substr(0, 19)) {
    if (c != '-' && c != ':') compact.push_back(c);
  }
  std::random_device random;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", random() & 0xffffff);
  return compact + "Z-" + suffix;
}

}  // namespace skillrunner::eval
