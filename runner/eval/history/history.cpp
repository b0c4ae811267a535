#include "runner/eval/history/history.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdint>
#include <set>
#include <system_error>

#include "runner/eval/history/history_schema.h"
#include "runner/eval/history/run_measures.h"
#include "runner/eval/history/sql_db.h"
#include "runner/eval/history/sql_open.h"
#include "runner/eval/records/record_fields.h"
#include "services/common/clock.h"
#include "services/common/iso_time.h"
#include "services/common/utf8.h"

namespace skillrunner::eval {
namespace json = boost::json;

namespace {

// A record's texts longer than this (an attempt's raw answer, mostly) are cut in the history.
constexpr std::size_t kMaxRecordText = 64 * 1024;
// Shards writing the same file wait this long for each other's transaction.
constexpr int kBusyTimeoutMs = 30'000;

sql::Value Gate(std::optional<bool> gate) {
  if (!gate) return std::nullopt;
  return sql::Int(std::int64_t{*gate ? 1 : 0});
}

sql::Value OptionalText(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return sql::Text(text);
}

std::optional<CaseOutcome> OutcomeNamed(std::string_view name) {
  for (CaseOutcome outcome :
       {CaseOutcome::kPass, CaseOutcome::kFail, CaseOutcome::kError, CaseOutcome::kJudgeError, CaseOutcome::kRefused}) {
    if (CaseOutcomeName(outcome) == name) return outcome;
  }
  return std::nullopt;
}

// A copy of `value` whose strings longer than `max_bytes` are cut at a character's edge, each saying
// how long it was.
json::value CapTexts(const json::value& value, std::size_t max_bytes) {
  if (value.is_string()) {
    std::string_view text = value.as_string();
    if (text.size() <= max_bytes) return value;
    return json::string(std::string(TruncateUtf8(text, max_bytes)) + " [cut: " + std::to_string(text.size()) +
                        " bytes in all]");
  }
  if (value.is_array()) {
    json::array out;
    out.reserve(value.as_array().size());
    for (const json::value& item : value.as_array()) out.push_back(CapTexts(item, max_bytes));
    return out;
  }
  if (value.is_object()) {
    json::object out;
    for (const auto& [key, item] : value.as_object()) out[key] = CapTexts(item, max_bytes);
    return out;
  }
  return value;
}

RunSummary ParseSummary(const std::string& text) {
  std::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return {};
  return RunSummary::FromJson(value.as_object());
}

// The models a run's cases were answered by (a JSON array, sorted), for the viewer's filter.
json::array ModelsOf(const std::vector<json::object>& records) {
  std::set<std::string, std::less<>> models;
  for (const json::object& record : records) {
    if (std::string_view model = TextAt(MetricsOf(record), "model"); !model.empty()) models.emplace(model);
  }
  json::array out;
  for (const std::string& model : models) out.emplace_back(model);
  return out;
}

}  // namespace

struct History::Impl {
  std::unique_ptr<sql::Db> db;
};

History::History(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
History::~History() = default;

const std::string& History::name() const { return impl_->db->name(); }

Result<std::unique_ptr<History>> History::Open(const std::string& location) {
  auto db = sql::Open(location, false, kBusyTimeoutMs);
  const std::string context = "cannot open eval history " + sql::DisplayName(location);
  if (!db) return Fail(std::move(db.error()), context);
  if (auto migrated = MigrateHistory(**db); !migrated) return Fail(std::move(migrated.error()), context);
  return std::unique_ptr<History>(new History(std::make_unique<Impl>(Impl{std::move(*db)})));
}

namespace {

Result<void> Run(sql::Db& db, std::string_view statement, const std::vector<sql::Value>& params) {
  auto done = db.Query(statement, params);
  if (!done) return std::unexpected(std::move(done.error()));
  return {};
}

Result<void> DeleteRun(sql::Db& db, std::string_view run_id) {
  for (const char* statement :
       {"DELETE FROM criterion_verdicts WHERE run_id = $1", "DELETE FROM case_outcomes WHERE run_id = $1",
        "DELETE FROM case_records WHERE run_id = $1", "DELETE FROM run_measures WHERE run_id = $1",
        "DELETE FROM runs WHERE run_id = $1"}) {
    if (auto done = Run(db, statement, {sql::Text(run_id)}); !done) return done;
  }
  return {};
}

Result<void> InsertRun(sql::Db& db, const RunSummary& summary, const std::vector<json::object>& records,
                       std::string_view run_id, std::string_view suite) {
  return Run(db,
             "INSERT INTO runs (run_id, suite, started_at, finished_at, summary, status, git_ref, models) "
             "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
             {sql::Text(run_id), sql::Text(suite), OptionalText(summary.started_at), OptionalText(summary.finished_at),
              sql::Text(json::serialize(summary.ToJson())), OptionalText(summary.status),
              OptionalText(summary.git_ref.value_or("")), sql::Text(json::serialize(ModelsOf(records)))});
}

// A merged run may carry one case twice; the last wins.
constexpr const char* kUpsertOutcome =
    "INSERT INTO case_outcomes (run_id, skill, case_id, \"repeat\", outcome, duration_ms, input_tokens, "
    "output_tokens, cost_usd, schema_ok, expected_ok, rubric_ok, review_gate_ok, check_ok) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
    "ON CONFLICT (run_id, skill, case_id, \"repeat\") DO UPDATE SET outcome = excluded.outcome, "
    "duration_ms = excluded.duration_ms, input_tokens = excluded.input_tokens, "
    "output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd, schema_ok = excluded.schema_ok, "
    "expected_ok = excluded.expected_ok, rubric_ok = excluded.rubric_ok, review_gate_ok = excluded.review_gate_ok, "
    "check_ok = excluded.check_ok";
constexpr const char* kUpsertVerdict =
    "INSERT INTO criterion_verdicts (run_id, skill, case_id, \"repeat\", criterion_id, verdict) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (run_id, skill, case_id, \"repeat\", criterion_id) DO UPDATE SET verdict = excluded.verdict";

Result<void> InsertVerdicts(sql::Db& db, std::string_view run_id, const std::string& skill,
                            const json::object& record) {
  const json::object* review = ReviewOf(record);
  const json::value* results = review ? review->if_contains("criteria_results") : nullptr;
  if (results == nullptr || !results->is_array()) return {};
  for (const json::value& result : results->as_array()) {
    if (!result.is_object()) continue;
    std::string_view criterion = TextAt(&result.as_object(), "criterion_id");
    std::string_view verdict = TextAt(&result.as_object(), "verdict");
    if (criterion.empty() || verdict.empty()) continue;
    auto done = Run(db, kUpsertVerdict,
                    {sql::Text(run_id), sql::Text(skill), sql::Text(CaseIdOf(record)), sql::Int(RepeatOf(record)),
                     sql::Text(criterion), sql::Text(verdict)});
    if (!done) return done;
  }
  return {};
}

Result<void> InsertCases(sql::Db& db, std::string_view run_id, const std::vector<json::object>& records) {
  for (const json::object& record : records) {
    const std::string skill = SkillLabel(record);  // a candidate's cases apart: "greet@2" (design.md §11.2)
    const json::object* metrics = MetricsOf(record);
    std::optional<double> ms = CaseDurationMs(record);
    std::optional<std::int64_t> duration = ms ? std::optional<std::int64_t>(std::llround(*ms)) : std::nullopt;
    const CaseGates gates = GatesOf(record);
    auto done = Run(
        db, kUpsertOutcome,
        {sql::Text(run_id), sql::Text(skill), sql::Text(CaseIdOf(record)), sql::Int(RepeatOf(record)),
         sql::Text(CaseOutcomeName(OutcomeOf(record))), sql::Int(duration), sql::Int(IntAt(metrics, "input_tokens")),
         sql::Int(IntAt(metrics, "output_tokens")), sql::Real(CaseCostUsd(record)), Gate(gates.schema),
         Gate(gates.expected), Gate(gates.rubric), Gate(gates.review_gate), Gate(gates.checks)});
    if (!done) return done;
    if (auto verdicts = InsertVerdicts(db, run_id, skill, record); !verdicts) return verdicts;
  }
  return {};
}

Result<void> InsertRecords(sql::Db& db, std::string_view run_id, const std::vector<json::object>& records) {
  for (const json::object& record : records) {
    auto done = Run(db,
                    "INSERT INTO case_records (run_id, skill, case_id, \"repeat\", record) VALUES ($1, $2, $3, $4, $5) "
                    "ON CONFLICT (run_id, skill, case_id, \"repeat\") DO UPDATE SET record = excluded.record",
                    {sql::Text(run_id), sql::Text(SkillLabel(record)), sql::Text(CaseIdOf(record)),
                     sql::Int(RepeatOf(record)), sql::Text(json::serialize(CapTexts(record, kMaxRecordText)))});
    if (!done) return done;
  }
  return {};
}

Result<void> InsertMeasures(sql::Db& db, std::string_view run_id, const std::vector<json::object>& records) {
  for (const MeasureCount& count : CountMeasures(records)) {
    auto done = Run(db, "INSERT INTO run_measures (run_id, skill, measure, successes, n) VALUES ($1, $2, $3, $4, $5)",
                    {sql::Text(run_id), sql::Text(count.skill), sql::Text(count.measure), sql::Int(count.successes),
                     sql::Int(count.n)});
    if (!done) return done;
  }
  return {};
}

}  // namespace

Result<void> History::RecordRun(const RunSummary& summary, const std::vector<json::object>& records) {
  std::string_view run_id = summary.run_id;
  std::string_view suite = summary.suite;
  if (run_id.empty() || suite.empty()) {
    return Fail(ErrorCode::kInternal,
                "cannot record run in " + name() + ": the summary has no \"run_id\" or no \"suite\"");
  }
  sql::Db& db = *impl_->db;
  auto recorded = db.Transaction([&]() -> Result<void> {
    if (auto deleted = DeleteRun(db, run_id); !deleted) return deleted;
    if (auto inserted = InsertRun(db, summary, records, run_id, suite); !inserted) return inserted;
    for (auto insert : {InsertCases, InsertRecords, InsertMeasures}) {
      if (auto inserted = insert(db, run_id, records); !inserted) return inserted;
    }
    return {};
  });
  if (!recorded) return Fail(std::move(recorded.error()), "cannot record run " + std::string(run_id) + " in " + name());
  return {};
}

namespace {

std::string IdentityKey(const std::string& skill, const std::string& case_id, std::int64_t repeat) {
  // Rebuild the record's identity so the key is exactly CaseKey's.
  json::object identity{{"skill", skill}, {"case", case_id}};
  if (repeat > 0) identity["repeat"] = repeat;
  return CaseKey(identity);
}

Result<void> LoadOutcomes(sql::Db& db, BaselineRun& run) {
  auto rows = db.Query(
      "SELECT skill, case_id, \"repeat\", outcome, schema_ok, expected_ok, rubric_ok, review_gate_ok, check_ok "
      "FROM case_outcomes WHERE run_id = $1",
      {sql::Text(run.run_id)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  for (std::size_t r = 0; r < rows->size(); ++r) {
    std::optional<CaseOutcome> outcome = OutcomeNamed(rows->TextAt(r, 3));
    if (!outcome) continue;  // written by a newer version; not comparable
    const std::string key = IdentityKey(rows->TextAt(r, 0), rows->TextAt(r, 1), rows->IntAt(r, 2));
    run.outcomes[key] = *outcome;
    auto gate = [&](std::size_t column) -> std::optional<bool> {
      if (rows->IsNull(r, column)) return std::nullopt;
      return rows->IntAt(r, column) != 0;
    };
    CaseGates gates{gate(4), gate(5), gate(6), gate(7), gate(8)};
    if (gates.schema || gates.expected || gates.rubric || gates.review_gate || gates.checks) run.gates[key] = gates;
  }
  auto verdicts =
      db.Query("SELECT skill, case_id, \"repeat\", criterion_id, verdict FROM criterion_verdicts WHERE run_id = $1",
               {sql::Text(run.run_id)});
  if (!verdicts) return std::unexpected(std::move(verdicts.error()));
  for (std::size_t r = 0; r < verdicts->size(); ++r) {
    const std::string key = IdentityKey(verdicts->TextAt(r, 0), verdicts->TextAt(r, 1), verdicts->IntAt(r, 2));
    run.verdicts[key][verdicts->TextAt(r, 3)] = verdicts->TextAt(r, 4);
  }
  return {};
}

// The query of a baseline `which`: the newest other whole run of the suite ("last"), the newest
// whose gates passed ("last-passing"), the suite's pinned run ("pinned"), or the run named.
constexpr const char* kLastRun =
    "SELECT run_id, started_at, summary, suite FROM runs "
    "WHERE suite = $1 AND run_id <> $2 AND summary ->> 'shard' IS NULL ";
std::string BaselineQuery(std::string_view which) {
  if (which == "last") return std::string(kLastRun) + "ORDER BY started_at DESC, rowid DESC LIMIT 1";
  if (which == "last-passing") {
    return std::string(kLastRun) + "AND summary ->> 'status' = 'pass' ORDER BY started_at DESC, rowid DESC LIMIT 1";
  }
  if (which == "pinned") {
    return "SELECT r.run_id, r.started_at, r.summary, r.suite FROM pins p JOIN runs r ON r.run_id = p.run_id "
           "WHERE p.suite = $1 AND r.run_id <> $2";
  }
  return "SELECT run_id, started_at, summary, suite FROM runs WHERE run_id = $1";
}

}  // namespace

bool IsBaselineKind(std::string_view which) { return which == "last" || which == "last-passing" || which == "pinned"; }

Result<std::optional<BaselineRun>> History::LoadBaseline(std::string_view suite_id, std::string_view which,
                                                         std::string_view current_run_id) {
  const bool kind = IsBaselineKind(which);
  const std::string context = "cannot load baseline " + std::string(which) + " from " + name();
  std::vector<sql::Value> params{sql::Text(kind ? suite_id : which)};
  if (kind) params.push_back(sql::Text(current_run_id));
  auto rows = impl_->db->Query(BaselineQuery(which), params);
  if (!rows) return Fail(std::move(rows.error()), context);
  if (rows->empty()) {
    if (kind) return std::optional<BaselineRun>();
    return Fail(ErrorCode::kConfigInvalid,
                "baseline run " + std::string(which) + " is not in the eval history " + name());
  }
  if (std::string suite = rows->TextAt(0, 3); suite != suite_id) {
    return Fail(ErrorCode::kConfigInvalid,
                "baseline run " + std::string(which) + " belongs to suite " + suite + ", not " + std::string(suite_id));
  }
  BaselineRun run{rows->TextAt(0, 0), rows->TextAt(0, 1), ParseSummary(rows->TextAt(0, 2)), {}, {}};
  if (auto loaded = LoadOutcomes(*impl_->db, run); !loaded) return Fail(std::move(loaded.error()), context);
  return std::optional<BaselineRun>(std::move(run));
}

Result<std::string> History::Pin(std::string_view run_id) {
  const std::string context = "cannot pin run " + std::string(run_id) + " in " + name();
  auto found = impl_->db->Query("SELECT suite FROM runs WHERE run_id = $1", {sql::Text(run_id)});
  if (!found) return Fail(std::move(found.error()), context);
  if (found->empty()) {
    return Fail(ErrorCode::kConfigInvalid, "run " + std::string(run_id) + " is not in the eval history " + name());
  }
  std::string suite = found->TextAt(0, 0);
  auto pinned = impl_->db->Query(
      "INSERT INTO pins (suite, run_id, pinned_at) VALUES ($1, $2, $3) "
      "ON CONFLICT (suite) DO UPDATE SET run_id = excluded.run_id, pinned_at = excluded.pinned_at",
      {sql::Text(suite), sql::Text(run_id), sql::Text(IsoUtc(RealClock().WallNow()))});
  if (!pinned) return Fail(std::move(pinned.error()), context);
  return suite;
}

Result<std::optional<RunSummary>> History::FindRun(std::string_view run_id) {
  auto rows = impl_->db->Query("SELECT summary FROM runs WHERE run_id = $1", {sql::Text(run_id)});
  if (!rows) return Fail(std::move(rows.error()), "cannot read " + name());
  if (rows->empty()) return std::optional<RunSummary>();
  return std::optional<RunSummary>(ParseSummary(rows->TextAt(0, 0)));
}

Result<std::vector<TrendPoint>> History::Trend(std::string_view suite_id, std::size_t limit) {
  auto rows = impl_->db->Query(
      "SELECT run_id, started_at, summary FROM runs WHERE suite = $1 AND summary ->> 'shard' IS NULL "
      "ORDER BY started_at DESC, rowid DESC LIMIT $2",
      {sql::Text(suite_id), sql::Int(static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)))});
  if (!rows) return Fail(std::move(rows.error()), "cannot read the trend from " + name());
  std::vector<TrendPoint> points;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    points.push_back({rows->TextAt(r, 0), rows->TextAt(r, 1), ParseSummary(rows->TextAt(r, 2))});
  }
  std::reverse(points.begin(), points.end());
  return points;
}

Result<void> History::RecordBatch(std::string_view run_id, const HistoryBatch& batch) {
  auto done = impl_->db->Query(
      "INSERT INTO batches (run_id, provider, round, batch_id, adopted, recorded_at) "
      "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
      {sql::Text(run_id), sql::Text(batch.provider), sql::Int(std::int64_t{batch.round}), sql::Text(batch.batch_id),
       sql::Int(std::int64_t{batch.adopted ? 1 : 0}), sql::Text(batch.recorded_at)});
  if (!done) return Fail(std::move(done.error()), "cannot record batch " + batch.batch_id + " in " + name());
  return {};
}

Result<std::vector<HistoryBatch>> History::Batches(std::string_view run_id) {
  auto rows = impl_->db->Query(
      "SELECT provider, round, batch_id, adopted, recorded_at FROM batches WHERE run_id = $1 "
      "ORDER BY round, provider, batch_id",
      {sql::Text(run_id)});
  if (!rows) return std::unexpected(std::move(rows.error()));
  std::vector<HistoryBatch> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    out.push_back(HistoryBatch{rows->TextAt(r, 0), static_cast<int>(rows->IntAt(r, 1)), rows->TextAt(r, 2),
                               rows->IntAt(r, 3) != 0, rows->TextAt(r, 4)});
  }
  return out;
}

}  // namespace skillrunner::eval
