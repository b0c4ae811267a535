#include "runner/eval/history/history.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdint>
#include <system_error>

#include "runner/eval/history/sqlite_db.h"
#include "runner/eval/records/record_fields.h"
#include "services/common/iso_time.h"

namespace skillrunner::eval {
namespace json = boost::json;

namespace {

// Bump when the schema changes, and add a migration step in Migrate.
constexpr int kSchemaVersion = 5;
// Shards writing the same file wait this long for each other's transaction.
constexpr int kBusyTimeoutMs = 30'000;

// "repeat" is 0 for a case that ran once (its record has no "repeat"): the
// key columns must not hold NULL, which SQLite treats as distinct from itself.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY NOT NULL,
  suite TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  summary TEXT NOT NULL,
  status TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_suite ON runs(suite, started_at);
CREATE TABLE IF NOT EXISTS case_outcomes (
  run_id TEXT NOT NULL,
  skill TEXT NOT NULL,
  case_id TEXT NOT NULL,
  "repeat" INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  duration_ms INTEGER,
  input_tokens INTEGER,
  output_tokens INTEGER,
  PRIMARY KEY (run_id, skill, case_id, "repeat")
);
CREATE TABLE IF NOT EXISTS criterion_verdicts (
  run_id TEXT NOT NULL,
  skill TEXT NOT NULL,
  case_id TEXT NOT NULL,
  "repeat" INTEGER NOT NULL,
  criterion_id TEXT NOT NULL,
  verdict TEXT NOT NULL,
  PRIMARY KEY (run_id, skill, case_id, "repeat", criterion_id)
);
)sql";

// Version 2 (design.md §9.4): what each case cost, its judging included; NULL
// when nothing it used had a price.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE case_outcomes ADD COLUMN cost_usd REAL;
ALTER TABLE case_outcomes ADD COLUMN schema_ok INTEGER;
ALTER TABLE case_outcomes ADD COLUMN expected_ok INTEGER;
ALTER TABLE case_outcomes ADD COLUMN rubric_ok INTEGER;
)sql";

// Version 3 (design.md §10.1): the skill's own review gate, a regression measure
// of its own when the suite judges with another rubric.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE case_outcomes ADD COLUMN review_gate_ok INTEGER;
)sql";

// Version 4 (design.md §10.6): every provider batch of a batch-mode run, written
// when the batch is created (a run killed before it ends still has them).
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE IF NOT EXISTS batches (
  run_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  round INTEGER NOT NULL,
  batch_id TEXT NOT NULL,
  adopted INTEGER NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, provider, batch_id)
);
)sql";

// Version 5: the run each suite is compared with under --baseline pinned (`eval pin RUN_ID`).
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE IF NOT EXISTS pins (
  suite TEXT PRIMARY KEY NOT NULL,
  run_id TEXT NOT NULL,
  pinned_at TEXT NOT NULL
);
)sql";

std::optional<std::int64_t> AsInt(std::optional<bool> gate) {
  if (!gate) return std::nullopt;
  return *gate ? 1 : 0;
}

void BindOptionalText(sqlite::Statement& stmt, int index, const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  if (value != nullptr && value->is_string()) {
    stmt.Bind(index, std::string_view(value->as_string()));
  } else {
    stmt.BindNull(index);
  }
}

std::optional<CaseOutcome> OutcomeNamed(std::string_view name) {
  for (CaseOutcome outcome : {CaseOutcome::kPass, CaseOutcome::kFail, CaseOutcome::kError, CaseOutcome::kJudgeError}) {
    if (CaseOutcomeName(outcome) == name) return outcome;
  }
  return std::nullopt;
}

json::object ParseSummary(const std::string& text) {
  std::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return {};
  return std::move(value.as_object());
}

}  // namespace

struct History::Impl {
  sqlite::Database db;
};

CaseGates GatesOf(const json::object& record) {
  CaseGates gates;
  const CaseOutcome outcome = OutcomeOf(record);
  gates.schema = outcome != CaseOutcome::kError;
  if (const json::value* match = record.if_contains("expected_match"); match && match->is_bool()) {
    gates.expected = match->as_bool();
  }
  const json::value* review = record.if_contains("review");
  const json::value* pass = review && review->is_object() ? review->as_object().if_contains("pass") : nullptr;
  if (outcome != CaseOutcome::kError && outcome != CaseOutcome::kJudgeError && pass && pass->is_bool()) {
    gates.rubric = pass->as_bool();
  }
  // The skill's own gate: its final verdict rides on the result.
  const json::object* gate = ObjectAt(ObjectAt(&record, "result"), "review");
  const json::value* gate_pass = gate ? gate->if_contains("pass") : nullptr;
  if (outcome != CaseOutcome::kError && gate_pass && gate_pass->is_bool()) gates.review_gate = gate_pass->as_bool();
  return gates;
}

History::History(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
History::~History() = default;

namespace {

Result<int> UserVersion(sqlite::Database& db) {
  auto stmt = db.Prepare("PRAGMA user_version");
  if (!stmt) return std::unexpected(std::move(stmt.error()));
  auto row = stmt->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  return *row ? static_cast<int>(stmt->Int(0)) : 0;
}

// Creates or upgrades the schema inside one write transaction, so two shards
// opening a fresh file at once do not both create it.
Result<void> Migrate(sqlite::Database& db) {
  auto transaction = sqlite::Transaction::Begin(db);
  if (!transaction) return std::unexpected(std::move(transaction.error()));
  auto version = UserVersion(db);
  if (!version) return std::unexpected(std::move(version.error()));
  if (*version > kSchemaVersion) {
    return Fail(ErrorCode::kInternal, "schema version " + std::to_string(*version) +
                                          " is newer than this skillrunner understands (" +
                                          std::to_string(kSchemaVersion) + ")");
  }
  if (*version < 1) {
    if (auto created = db.Exec(kSchemaV1); !created) return created;
  }
  if (*version < 2) {
    if (auto altered = db.Exec(kSchemaV2); !altered) return altered;
  }
  if (*version < 3) {
    if (auto altered = db.Exec(kSchemaV3); !altered) return altered;
  }
  if (*version < 4) {
    if (auto created = db.Exec(kSchemaV4); !created) return created;
  }
  if (*version < 5) {
    if (auto created = db.Exec(kSchemaV5); !created) return created;
  }
  if (*version < kSchemaVersion) {
    // Not a value from outside: the compiled-in version number.
    auto set = db.Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    if (!set) return set;
  }
  return transaction->Commit();
}

}  // namespace

Result<std::unique_ptr<History>> History::Open(const std::filesystem::path& file) {
  const std::string context = "cannot open eval history " + file.string();
  std::filesystem::path folder = file.parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
    return Fail(ErrorCode::kConfigInvalid, context + ": folder " + folder.string() + " does not exist");
  }
  auto db = sqlite::Database::Open(file, kBusyTimeoutMs);
  if (!db) return Fail(std::move(db.error()), context);
  // WAL lets readers go on while a shard writes; it needs the folder to be
  // writable for its -wal and -shm files.
  if (auto wal = db->Exec("PRAGMA journal_mode = WAL"); !wal) return Fail(std::move(wal.error()), context);
  if (auto migrated = Migrate(*db); !migrated) return Fail(std::move(migrated.error()), context);
  return std::unique_ptr<History>(new History(std::make_unique<Impl>(Impl{std::move(*db)})));
}

namespace {

Result<void> DeleteRun(sqlite::Database& db, std::string_view run_id) {
  for (const char* sql : {"DELETE FROM criterion_verdicts WHERE run_id = ?1",
                          "DELETE FROM case_outcomes WHERE run_id = ?1", "DELETE FROM runs WHERE run_id = ?1"}) {
    auto stmt = db.Prepare(sql);
    if (!stmt) return std::unexpected(std::move(stmt.error()));
    stmt->Bind(1, run_id);
    if (auto done = stmt->Run(); !done) return done;
  }
  return {};
}

Result<void> InsertRun(sqlite::Database& db, const json::object& summary, std::string_view run_id,
                       std::string_view suite) {
  auto stmt = db.Prepare(
      "INSERT INTO runs (run_id, suite, started_at, finished_at, summary, status) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!stmt) return std::unexpected(std::move(stmt.error()));
  stmt->Bind(1, run_id);
  stmt->Bind(2, suite);
  BindOptionalText(*stmt, 3, summary, "started_at");
  BindOptionalText(*stmt, 4, summary, "finished_at");
  stmt->Bind(5, std::string_view(json::serialize(summary)));
  BindOptionalText(*stmt, 6, summary, "status");
  return stmt->Run();
}

// INSERT OR REPLACE: a merged run may carry one case twice; the last wins.
Result<void> InsertCases(sqlite::Database& db, std::string_view run_id, const std::vector<json::object>& records) {
  auto outcome_stmt = db.Prepare(
      "INSERT OR REPLACE INTO case_outcomes (run_id, skill, case_id, \"repeat\", outcome, "
      "duration_ms, input_tokens, output_tokens, cost_usd, schema_ok, expected_ok, rubric_ok, review_gate_ok) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  if (!outcome_stmt) return std::unexpected(std::move(outcome_stmt.error()));
  auto verdict_stmt = db.Prepare(
      "INSERT OR REPLACE INTO criterion_verdicts (run_id, skill, case_id, \"repeat\", "
      "criterion_id, verdict) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!verdict_stmt) return std::unexpected(std::move(verdict_stmt.error()));

  for (const json::object& record : records) {
    const std::string skill = SkillLabel(record);  // a candidate's cases apart: "greet@2" (design.md §11.2)
    std::string_view case_id = TextAt(&record, "case");
    std::int64_t repeat = IntAt(&record, "repeat").value_or(0);
    const json::object* metrics = MetricsOf(record);
    std::optional<std::int64_t> duration = IntAt(&record, "duration_ms");
    if (!duration) duration = IntAt(metrics, "duration_ms");

    outcome_stmt->Bind(1, run_id);
    outcome_stmt->Bind(2, skill);
    outcome_stmt->Bind(3, case_id);
    outcome_stmt->Bind(4, repeat);
    outcome_stmt->Bind(5, CaseOutcomeName(OutcomeOf(record)));
    outcome_stmt->Bind(6, duration);
    outcome_stmt->Bind(7, IntAt(metrics, "input_tokens"));
    outcome_stmt->Bind(8, IntAt(metrics, "output_tokens"));
    outcome_stmt->BindReal(9, CaseCostUsd(record));
    const CaseGates gates = GatesOf(record);
    outcome_stmt->Bind(10, AsInt(gates.schema));
    outcome_stmt->Bind(11, AsInt(gates.expected));
    outcome_stmt->Bind(12, AsInt(gates.rubric));
    outcome_stmt->Bind(13, AsInt(gates.review_gate));
    if (auto done = outcome_stmt->Run(); !done) return done;

    const json::object* review = ObjectAt(&record, "review");
    const json::value* results = review ? review->if_contains("criteria_results") : nullptr;
    if (results == nullptr || !results->is_array()) continue;
    for (const json::value& result : results->as_array()) {
      if (!result.is_object()) continue;
      std::string_view criterion = TextAt(&result.as_object(), "criterion_id");
      std::string_view verdict = TextAt(&result.as_object(), "verdict");
      if (criterion.empty() || verdict.empty()) continue;
      verdict_stmt->Bind(1, run_id);
      verdict_stmt->Bind(2, skill);
      verdict_stmt->Bind(3, case_id);
      verdict_stmt->Bind(4, repeat);
      verdict_stmt->Bind(5, criterion);
      verdict_stmt->Bind(6, verdict);
      if (auto done = verdict_stmt->Run(); !done) return done;
    }
  }
  return {};
}

}  // namespace

Result<void> History::RecordRun(const json::object& summary, const std::vector<json::object>& records) {
  std::string_view run_id = TextAt(&summary, "run_id");
  std::string_view suite = TextAt(&summary, "suite");
  if (run_id.empty() || suite.empty()) {
    return Fail(ErrorCode::kInternal,
                "cannot record run in " + impl_->db.name() + ": the summary has no \"run_id\" or no \"suite\"");
  }
  const std::string context = "cannot record run " + std::string(run_id) + " in " + impl_->db.name();
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return Fail(std::move(transaction.error()), context);
  if (auto deleted = DeleteRun(impl_->db, run_id); !deleted) return Fail(std::move(deleted.error()), context);
  if (auto inserted = InsertRun(impl_->db, summary, run_id, suite); !inserted) {
    return Fail(std::move(inserted.error()), context);
  }
  if (auto inserted = InsertCases(impl_->db, run_id, records); !inserted) {
    return Fail(std::move(inserted.error()), context);
  }
  if (auto committed = transaction->Commit(); !committed) return Fail(std::move(committed.error()), context);
  return {};
}

namespace {

Result<void> LoadOutcomes(sqlite::Database& db, BaselineRun& run) {
  auto stmt = db.Prepare(
      "SELECT skill, case_id, \"repeat\", outcome, schema_ok, expected_ok, rubric_ok, review_gate_ok "
      "FROM case_outcomes "
      "WHERE run_id = ?1");
  if (!stmt) return std::unexpected(std::move(stmt.error()));
  stmt->Bind(1, std::string_view(run.run_id));
  while (true) {
    auto row = stmt->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) break;
    std::optional<CaseOutcome> outcome = OutcomeNamed(stmt->Text(3));
    if (!outcome) continue;  // written by a newer version; not comparable
    // Rebuild the record's identity so the key is exactly CaseKey's.
    json::object identity{{"skill", stmt->Text(0)}, {"case", stmt->Text(1)}};
    if (std::int64_t repeat = stmt->Int(2); repeat > 0) identity["repeat"] = repeat;
    const std::string key = CaseKey(identity);
    run.outcomes[key] = *outcome;
    auto gate = [&](int column) -> std::optional<bool> {
      if (stmt->IsNull(column)) return std::nullopt;
      return stmt->Int(column) != 0;
    };
    CaseGates gates{gate(4), gate(5), gate(6), gate(7)};
    if (gates.schema || gates.expected || gates.rubric || gates.review_gate) run.gates[key] = gates;
  }
  auto verdicts =
      db.Prepare("SELECT skill, case_id, \"repeat\", criterion_id, verdict FROM criterion_verdicts WHERE run_id = ?1");
  if (!verdicts) return std::unexpected(std::move(verdicts.error()));
  verdicts->Bind(1, std::string_view(run.run_id));
  while (true) {
    auto row = verdicts->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) break;
    json::object identity{{"skill", verdicts->Text(0)}, {"case", verdicts->Text(1)}};
    if (std::int64_t repeat = verdicts->Int(2); repeat > 0) identity["repeat"] = repeat;
    run.verdicts[CaseKey(identity)][verdicts->Text(3)] = verdicts->Text(4);
  }
  return {};
}

}  // namespace

namespace {

// The query of a baseline `which`: the newest other whole run of the suite ("last"), the newest
// whose gates passed ("last-passing"), the suite's pinned run ("pinned"), or the run named.
constexpr const char* kLastRun =
    "SELECT run_id, started_at, summary, suite FROM runs "
    "WHERE suite = ?1 AND run_id <> ?2 AND json_extract(summary, '$.shard') IS NULL ";
std::string BaselineQuery(std::string_view which) {
  if (which == "last") return std::string(kLastRun) + "ORDER BY started_at DESC, rowid DESC LIMIT 1";
  if (which == "last-passing") {
    return std::string(kLastRun) +
           "AND json_extract(summary, '$.status') = 'pass' "
           "ORDER BY started_at DESC, rowid DESC LIMIT 1";
  }
  if (which == "pinned") {
    return "SELECT r.run_id, r.started_at, r.summary, r.suite FROM pins p JOIN runs r ON r.run_id = p.run_id "
           "WHERE p.suite = ?1 AND r.run_id <> ?2";
  }
  return "SELECT run_id, started_at, summary, suite FROM runs WHERE run_id = ?1";
}

}  // namespace

bool IsBaselineKind(std::string_view which) { return which == "last" || which == "last-passing" || which == "pinned"; }

Result<std::optional<BaselineRun>> History::LoadBaseline(std::string_view suite_id, std::string_view which,
                                                         std::string_view current_run_id) {
  const bool kind = IsBaselineKind(which);
  const std::string context = "cannot load baseline " + std::string(which) + " from " + impl_->db.name();
  auto stmt = impl_->db.Prepare(BaselineQuery(which));
  if (!stmt) return Fail(std::move(stmt.error()), context);
  if (kind) {
    stmt->Bind(1, suite_id);
    stmt->Bind(2, current_run_id);
  } else {
    stmt->Bind(1, which);
  }
  auto row = stmt->Step();
  if (!row) return Fail(std::move(row.error()), context);
  if (!*row) {
    if (kind) return std::optional<BaselineRun>();
    return Fail(ErrorCode::kConfigInvalid,
                "baseline run " + std::string(which) + " is not in the eval history " + impl_->db.name());
  }
  if (std::string suite = stmt->Text(3); suite != suite_id) {
    return Fail(ErrorCode::kConfigInvalid,
                "baseline run " + std::string(which) + " belongs to suite " + suite + ", not " + std::string(suite_id));
  }
  BaselineRun run{stmt->Text(0), stmt->Text(1), ParseSummary(stmt->Text(2)), {}, {}};
  if (auto loaded = LoadOutcomes(impl_->db, run); !loaded) {
    return Fail(std::move(loaded.error()), context);
  }
  return std::optional<BaselineRun>(std::move(run));
}

Result<std::string> History::Pin(std::string_view run_id) {
  const std::string context = "cannot pin run " + std::string(run_id) + " in " + impl_->db.name();
  auto find = impl_->db.Prepare("SELECT suite FROM runs WHERE run_id = ?1");
  if (!find) return Fail(std::move(find.error()), context);
  find->Bind(1, run_id);
  auto row = find->Step();
  if (!row) return Fail(std::move(row.error()), context);
  if (!*row) {
    return Fail(ErrorCode::kConfigInvalid,
                "run " + std::string(run_id) + " is not in the eval history " + impl_->db.name());
  }
  std::string suite = find->Text(0);
  auto pin = impl_->db.Prepare(
      "INSERT INTO pins (suite, run_id, pinned_at) VALUES (?1, ?2, ?3) "
      "ON CONFLICT(suite) DO UPDATE SET run_id = excluded.run_id, pinned_at = excluded.pinned_at");
  if (!pin) return Fail(std::move(pin.error()), context);
  pin->Bind(1, std::string_view(suite));
  pin->Bind(2, run_id);
  const std::string now = IsoUtc(std::chrono::system_clock::now());
  pin->Bind(3, std::string_view(now));
  if (auto done = pin->Step(); !done) return Fail(std::move(done.error()), context);
  return suite;
}

Result<std::optional<json::object>> History::FindRun(std::string_view run_id) {
  const std::string context = "cannot read " + impl_->db.name();
  auto stmt = impl_->db.Prepare("SELECT summary FROM runs WHERE run_id = ?1");
  if (!stmt) return Fail(std::move(stmt.error()), context);
  stmt->Bind(1, run_id);
  auto row = stmt->Step();
  if (!row) return Fail(std::move(row.error()), context);
  if (!*row) return std::optional<json::object>();
  return std::optional<json::object>(ParseSummary(stmt->Text(0)));
}

Result<std::vector<TrendPoint>> History::Trend(std::string_view suite_id, std::size_t limit) {
  const std::string context = "cannot read the trend from " + impl_->db.name();
  auto stmt = impl_->db.Prepare(
      "SELECT run_id, started_at, summary FROM runs WHERE suite = ?1 "
      "AND json_extract(summary, '$.shard') IS NULL "
      "ORDER BY started_at DESC, rowid DESC LIMIT ?2");
  if (!stmt) return Fail(std::move(stmt.error()), context);
  stmt->Bind(1, suite_id);
  stmt->Bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
  std::vector<TrendPoint> points;
  while (true) {
    auto row = stmt->Step();
    if (!row) return Fail(std::move(row.error()), context);
    if (!*row) break;
    points.push_back({stmt->Text(0), stmt->Text(1), ParseSummary(stmt->Text(2))});
  }
  std::reverse(points.begin(), points.end());
  return points;
}

Result<void> History::RecordBatch(std::string_view run_id, const HistoryBatch& batch) {
  const std::string context = "cannot record batch " + batch.batch_id + " in " + impl_->db.name();
  auto stmt = impl_->db.Prepare(
      "INSERT OR IGNORE INTO batches (run_id, provider, round, batch_id, adopted, recorded_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!stmt) return Fail(std::move(stmt.error()), context);
  stmt->Bind(1, run_id);
  stmt->Bind(2, std::string_view(batch.provider));
  stmt->Bind(3, static_cast<std::int64_t>(batch.round));
  stmt->Bind(4, std::string_view(batch.batch_id));
  stmt->Bind(5, static_cast<std::int64_t>(batch.adopted ? 1 : 0));
  stmt->Bind(6, std::string_view(batch.recorded_at));
  if (auto done = stmt->Run(); !done) return Fail(std::move(done.error()), context);
  return {};
}

Result<std::vector<HistoryBatch>> History::Batches(std::string_view run_id) {
  auto stmt = impl_->db.Prepare(
      "SELECT provider, round, batch_id, adopted, recorded_at FROM batches WHERE run_id = ?1 "
      "ORDER BY round, provider, batch_id");
  if (!stmt) return std::unexpected(std::move(stmt.error()));
  stmt->Bind(1, run_id);
  std::vector<HistoryBatch> out;
  while (true) {
    auto row = stmt->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) break;
    out.push_back(
        HistoryBatch{stmt->Text(0), static_cast<int>(stmt->Int(1)), stmt->Text(2), stmt->Int(3) != 0, stmt->Text(4)});
  }
  return out;
}

}  // namespace skillrunner::eval
