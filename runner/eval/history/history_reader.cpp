#include "runner/eval/history/history_reader.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <system_error>

#include "runner/eval/history/history_schema.h"
#include "runner/eval/history/sql_db.h"
#include "runner/eval/history/sql_open.h"
#include "runner/eval/records/record_fields.h"

namespace skillrunner::eval {
namespace json = boost::json;

namespace {

// Readers wait this long for a writer's transaction (a shard recording its run).
constexpr int kBusyTimeoutMs = 5'000;
// The oldest schema that has what the viewer reads (case records, run measures, git refs).
constexpr int kFirstViewableSchema = 6;

constexpr const char* kRunColumns = "run_id, suite, started_at, finished_at, status, git_ref, summary, models";
constexpr const char* kWholeRun = "summary ->> 'shard' IS NULL";

json::object ParseObject(const std::string& text) {
  std::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return {};
  return std::move(value.as_object());
}

std::optional<std::string> OptionalText(const sql::Table& rows, std::size_t r, std::size_t column) {
  return rows.rows[r][column];
}

std::vector<std::string> ModelsAt(const sql::Table& rows, std::size_t r, std::size_t column) {
  std::error_code ec;
  json::value value = json::parse(rows.TextAt(r, column), ec);
  std::vector<std::string> models;
  if (ec || !value.is_array()) return models;
  for (const json::value& model : value.as_array()) {
    if (model.is_string()) models.emplace_back(model.as_string());
  }
  return models;
}

RunRow RunAt(const sql::Table& rows, std::size_t r) {
  return RunRow{rows.TextAt(r, 0),
                rows.TextAt(r, 1),
                rows.TextAt(r, 2),
                rows.TextAt(r, 3),
                rows.TextAt(r, 4),
                OptionalText(rows, r, 5),
                RunSummary::FromJson(ParseObject(rows.TextAt(r, 6))),
                ModelsAt(rows, r, 7)};
}

sql::Value Limit(std::size_t limit) {
  return sql::Int(static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
}

Result<void> CheckSchema(sql::Db& db, const std::string& location) {
  auto version = KnownSchemaVersion(db);
  if (!version) return std::unexpected(std::move(version.error()));
  if (*version < kFirstViewableSchema) {
    return Fail(ErrorCode::kConfigInvalid,
                "it was written by an older skillrunner (schema " + std::to_string(*version) +
                    "); view opens a history read-only and never upgrades it: record one run into it first "
                    "(skillrunner eval SUITE --history " +
                    location + ")");
  }
  return {};
}

}  // namespace

struct HistoryReader::Impl {
  std::unique_ptr<sql::Db> db;

  Result<sql::Table> Query(std::string_view statement, const std::vector<sql::Value>& params) {
    auto rows = db->Query(statement, params);
    if (!rows) return Fail(std::move(rows.error()), "cannot read " + db->name());
    return rows;
  }
  Result<std::vector<RunRow>> RunsWhere(const std::string& statement, const std::vector<sql::Value>& params) {
    auto rows = Query(statement, params);
    if (!rows) return std::unexpected(std::move(rows.error()));
    std::vector<RunRow> runs;
    for (std::size_t r = 0; r < rows->size(); ++r) runs.push_back(RunAt(*rows, r));
    return runs;
  }
};

HistoryReader::HistoryReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HistoryReader::~HistoryReader() = default;

const std::string& HistoryReader::name() const { return impl_->db->name(); }

Result<std::unique_ptr<HistoryReader>> HistoryReader::Open(const std::string& location) {
  auto db = sql::Open(location, true, kBusyTimeoutMs);
  const std::string context = "cannot open eval history " + sql::DisplayName(location);
  if (!db) return Fail(std::move(db.error()), context);
  if (auto checked = CheckSchema(**db, (*db)->name()); !checked) return Fail(std::move(checked.error()), context);
  return std::unique_ptr<HistoryReader>(new HistoryReader(std::make_unique<Impl>(Impl{std::move(*db)})));
}

Result<std::vector<SuiteRow>> HistoryReader::Suites() {
  auto rows = impl_->Query(
      std::string("SELECT suite, count(*) FROM runs WHERE ") + kWholeRun + " GROUP BY suite ORDER BY suite", {});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<SuiteRow> suites;
  for (std::size_t r = 0; r < rows->size(); ++r) suites.push_back({rows->TextAt(r, 0), rows->IntAt(r, 1), {}});
  for (SuiteRow& suite : suites) {
    auto last = Runs(suite.suite, 1);
    if (!last) return std::unexpected(std::move(last.error()));
    if (!last->empty()) suite.last = std::move(last->back());
  }
  return suites;
}

Result<std::vector<RunRow>> HistoryReader::Runs(std::string_view suite, std::size_t limit) {
  auto runs = impl_->RunsWhere(std::string("SELECT ") + kRunColumns + " FROM runs WHERE suite = $1 AND " + kWholeRun +
                                   " ORDER BY started_at DESC, rowid DESC LIMIT $2",
                               {sql::Text(suite), Limit(limit)});
  if (runs) std::reverse(runs->begin(), runs->end());
  return runs;
}

Result<std::optional<RunRow>> HistoryReader::Run(std::string_view run_id) {
  auto runs =
      impl_->RunsWhere(std::string("SELECT ") + kRunColumns + " FROM runs WHERE run_id = $1", {sql::Text(run_id)});
  if (!runs) return std::unexpected(std::move(runs.error()));
  if (runs->empty()) return std::optional<RunRow>();
  return std::optional<RunRow>(std::move(runs->front()));
}

Result<std::optional<RunRow>> HistoryReader::Previous(const RunRow& run) {
  auto runs = impl_->RunsWhere(std::string("SELECT ") + kRunColumns +
                                   " FROM runs WHERE suite = $1 AND run_id <> $2 AND started_at <= $3 AND " +
                                   kWholeRun + " ORDER BY started_at DESC, rowid DESC LIMIT 1",
                               {sql::Text(run.suite), sql::Text(run.run_id), sql::Text(run.started_at)});
  if (!runs) return std::unexpected(std::move(runs.error()));
  if (runs->empty()) return std::optional<RunRow>();
  return std::optional<RunRow>(std::move(runs->front()));
}

Result<std::vector<StoredMeasure>> HistoryReader::SuiteMeasures(std::string_view suite, std::size_t limit) {
  auto rows = impl_->Query(
      std::string("SELECT m.run_id, m.skill, m.measure, m.successes, m.n FROM run_measures m "
                  "JOIN (SELECT run_id FROM runs WHERE suite = $1 AND ") +
          kWholeRun + " ORDER BY started_at DESC, rowid DESC LIMIT $2) r ON r.run_id = m.run_id ORDER BY m.rowid",
      {sql::Text(suite), Limit(limit)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<StoredMeasure> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    out.push_back({rows->TextAt(r, 0),
                   MeasureCount{rows->TextAt(r, 1), rows->TextAt(r, 2), rows->IntAt(r, 3), rows->IntAt(r, 4)}});
  }
  return out;
}

Result<std::vector<MeasureCount>> HistoryReader::RunMeasures(std::string_view run_id) {
  auto rows = impl_->Query("SELECT skill, measure, successes, n FROM run_measures WHERE run_id = $1 ORDER BY rowid",
                           {sql::Text(run_id)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<MeasureCount> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    out.push_back(MeasureCount{rows->TextAt(r, 0), rows->TextAt(r, 1), rows->IntAt(r, 2), rows->IntAt(r, 3)});
  }
  return out;
}

Result<std::vector<json::object>> HistoryReader::Records(std::string_view run_id) {
  auto rows = impl_->Query("SELECT record FROM case_records WHERE run_id = $1 ORDER BY rowid", {sql::Text(run_id)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<json::object> out;
  out.reserve(rows->size());
  for (std::size_t r = 0; r < rows->size(); ++r) out.push_back(ParseObject(rows->TextAt(r, 0)));
  return out;
}

Result<std::optional<json::object>> HistoryReader::Record(std::string_view run_id, std::string_view skill,
                                                          std::string_view case_id, std::int64_t repeat) {
  auto rows = impl_->Query(
      "SELECT record FROM case_records WHERE run_id = $1 AND skill = $2 AND case_id = $3 AND \"repeat\" = $4",
      {sql::Text(run_id), sql::Text(skill), sql::Text(case_id), sql::Int(repeat)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  if (rows->empty()) return std::optional<json::object>();
  return std::optional<json::object>(ParseObject(rows->TextAt(0, 0)));
}

Result<std::vector<CaseRun>> HistoryReader::CaseAcrossRuns(std::string_view suite, std::string_view skill,
                                                           std::string_view case_id, std::int64_t repeat,
                                                           std::size_t limit) {
  auto rows = impl_->Query(
      "SELECT r.run_id, r.started_at, r.git_ref, c.record FROM case_records c JOIN runs r ON r.run_id = c.run_id "
      "WHERE c.skill = $1 AND c.case_id = $2 AND c.\"repeat\" = $3 AND r.suite = $4 AND r.summary ->> 'shard' IS NULL "
      "ORDER BY r.started_at DESC, r.rowid DESC LIMIT $5",
      {sql::Text(skill), sql::Text(case_id), sql::Int(repeat), sql::Text(suite), Limit(limit)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<CaseRun> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    out.push_back({rows->TextAt(r, 0), rows->TextAt(r, 1), OptionalText(*rows, r, 2), ParseObject(rows->TextAt(r, 3))});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Result<std::vector<RolloutPoint>> HistoryReader::RolloutPoints(std::size_t limit) {
  auto rows = impl_->Query(
      "SELECT rollout, skill, stable_version, candidate_version, at, kind, replica, state, traffic, reason, alpha, "
      "tau, status FROM (SELECT rowid AS seq, rollout, skill, stable_version, candidate_version, at, kind, replica, "
      "state, traffic, reason, alpha, tau, status, "
      "row_number() OVER (PARTITION BY rollout ORDER BY at DESC, rowid DESC) AS newest FROM rollout_points) p "
      "WHERE newest <= $1 ORDER BY rollout, at, seq",
      {Limit(limit)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<RolloutPoint> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    out.push_back(RolloutPoint{rows->TextAt(r, 0), rows->TextAt(r, 1), static_cast<int>(rows->IntAt(r, 2)),
                               static_cast<int>(rows->IntAt(r, 3)), rows->TextAt(r, 4), rows->TextAt(r, 5),
                               rows->TextAt(r, 6), rows->TextAt(r, 7), std::strtod(rows->TextAt(r, 8).c_str(), nullptr),
                               rows->TextAt(r, 9), std::strtod(rows->TextAt(r, 10).c_str(), nullptr),
                               std::strtod(rows->TextAt(r, 11).c_str(), nullptr), ParseObject(rows->TextAt(r, 12))});
  }
  return out;
}

Result<std::vector<SampleTally>> HistoryReader::RolloutSamples() {
  auto rows = impl_->Query(
      "SELECT rollout, arm, count(pass), coalesce(sum(pass), 0) FROM rollout_samples GROUP BY rollout, arm "
      "ORDER BY rollout, arm",
      {});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<SampleTally> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    out.push_back({rows->TextAt(r, 0), rows->TextAt(r, 1), rows->IntAt(r, 2), rows->IntAt(r, 3)});
  }
  return out;
}

BaselineRun BaselineFromRecords(const RunRow& run, const std::vector<json::object>& records) {
  BaselineRun baseline{run.run_id, run.started_at, run.summary, {}, {}};
  for (const json::object& record : records) {
    const std::string key = CaseKey(record);
    baseline.outcomes[key] = OutcomeOf(record);
    baseline.gates[key] = GatesOf(record);
    if (Verdicts verdicts = VerdictsOf(record); !verdicts.empty()) baseline.verdicts[key] = std::move(verdicts);
  }
  return baseline;
}

}  // namespace skillrunner::eval
