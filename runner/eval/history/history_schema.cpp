#include "runner/eval/history/history_schema.h"

#include <array>
#include <string>

namespace skillrunner::eval {

namespace {

// "repeat" is 0 for a case that ran once (its record has no "repeat"): the key columns must not
// hold NULL, which SQL treats as distinct from itself.
constexpr const char* kSqliteV1 = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY NOT NULL, suite TEXT NOT NULL, started_at TEXT, finished_at TEXT,
  summary TEXT NOT NULL, status TEXT);
CREATE INDEX IF NOT EXISTS runs_by_suite ON runs(suite, started_at);
CREATE TABLE IF NOT EXISTS case_outcomes (
  run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL, "repeat" INTEGER NOT NULL,
  outcome TEXT NOT NULL, duration_ms INTEGER, input_tokens INTEGER, output_tokens INTEGER,
  PRIMARY KEY (run_id, skill, case_id, "repeat"));
CREATE TABLE IF NOT EXISTS criterion_verdicts (
  run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL, "repeat" INTEGER NOT NULL,
  criterion_id TEXT NOT NULL, verdict TEXT NOT NULL,
  PRIMARY KEY (run_id, skill, case_id, "repeat", criterion_id));
)sql";

// PostgreSQL has no rowid: an identity column of that name keeps the order runs and records were
// written in, which the queries break ties by, as SQLite's rowid does. Summaries and records are
// json (not jsonb), kept as written.
constexpr const char* kPostgresV1 = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  run_id TEXT PRIMARY KEY NOT NULL, suite TEXT NOT NULL, started_at TEXT, finished_at TEXT,
  summary JSON NOT NULL, status TEXT);
CREATE INDEX IF NOT EXISTS runs_by_suite ON runs(suite, started_at);
CREATE TABLE IF NOT EXISTS case_outcomes (
  run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL, "repeat" BIGINT NOT NULL,
  outcome TEXT NOT NULL, duration_ms BIGINT, input_tokens BIGINT, output_tokens BIGINT,
  PRIMARY KEY (run_id, skill, case_id, "repeat"));
CREATE TABLE IF NOT EXISTS criterion_verdicts (
  run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL, "repeat" BIGINT NOT NULL,
  criterion_id TEXT NOT NULL, verdict TEXT NOT NULL,
  PRIMARY KEY (run_id, skill, case_id, "repeat", criterion_id));
)sql";

// 2 (design.md §9.4): what each case cost, its judging included (NULL when nothing it used had a
// price), and its gates.
constexpr const char* kSqliteV2 = R"sql(
ALTER TABLE case_outcomes ADD COLUMN cost_usd REAL;
ALTER TABLE case_outcomes ADD COLUMN schema_ok INTEGER;
ALTER TABLE case_outcomes ADD COLUMN expected_ok INTEGER;
ALTER TABLE case_outcomes ADD COLUMN rubric_ok INTEGER;
)sql";
constexpr const char* kPostgresV2 = R"sql(
ALTER TABLE case_outcomes ADD COLUMN IF NOT EXISTS cost_usd DOUBLE PRECISION,
  ADD COLUMN IF NOT EXISTS schema_ok INTEGER, ADD COLUMN IF NOT EXISTS expected_ok INTEGER,
  ADD COLUMN IF NOT EXISTS rubric_ok INTEGER;
)sql";

// 3 (design.md §10.1): the skill's own review gate.
constexpr const char* kSqliteV3 = "ALTER TABLE case_outcomes ADD COLUMN review_gate_ok INTEGER;";
constexpr const char* kPostgresV3 = "ALTER TABLE case_outcomes ADD COLUMN IF NOT EXISTS review_gate_ok INTEGER;";

// 4 (design.md §10.6): every provider batch of a batch-mode run, written when it is created.
constexpr const char* kBothV4 = R"sql(
CREATE TABLE IF NOT EXISTS batches (
  run_id TEXT NOT NULL, provider TEXT NOT NULL, round INTEGER NOT NULL, batch_id TEXT NOT NULL,
  adopted INTEGER NOT NULL, recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, provider, batch_id));
)sql";

// 5: the run each suite is compared with under --baseline pinned.
constexpr const char* kBothV5 = R"sql(
CREATE TABLE IF NOT EXISTS pins (suite TEXT PRIMARY KEY NOT NULL, run_id TEXT NOT NULL, pinned_at TEXT NOT NULL);
)sql";

// 6 (design.md §11.3): what the viewer reads. Each case's whole record (its long texts cut), each
// run's measures counted once when it is recorded (a trend over a thousand runs reads a few rows a
// run, not every case), the commit the run was made at and the models it used; and serve's
// rollouts (§11.2): each decision, command and periodic snapshot of a rollout's counts, and each
// answer its online review judged.
constexpr const char* kSqliteV6 = R"sql(
ALTER TABLE runs ADD COLUMN git_ref TEXT;
ALTER TABLE runs ADD COLUMN models TEXT;
CREATE TABLE IF NOT EXISTS case_records (
  run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL, "repeat" INTEGER NOT NULL,
  record TEXT NOT NULL, PRIMARY KEY (run_id, skill, case_id, "repeat"));
CREATE INDEX IF NOT EXISTS case_records_by_case ON case_records(skill, case_id);
CREATE TABLE IF NOT EXISTS run_measures (
  run_id TEXT NOT NULL, skill TEXT NOT NULL, measure TEXT NOT NULL, successes INTEGER NOT NULL,
  n INTEGER NOT NULL, PRIMARY KEY (run_id, skill, measure));
CREATE TABLE IF NOT EXISTS rollout_points (
  rollout TEXT NOT NULL, skill TEXT NOT NULL, stable_version INTEGER NOT NULL, candidate_version INTEGER NOT NULL,
  at TEXT NOT NULL, kind TEXT NOT NULL, replica TEXT NOT NULL, state TEXT NOT NULL, traffic REAL NOT NULL,
  reason TEXT NOT NULL, alpha REAL NOT NULL, tau REAL NOT NULL, status TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rollout_points_by_rollout ON rollout_points(rollout, at);
CREATE TABLE IF NOT EXISTS rollout_samples (
  rollout TEXT NOT NULL, skill TEXT NOT NULL, arm TEXT NOT NULL, version INTEGER NOT NULL, at TEXT NOT NULL,
  replica TEXT NOT NULL, pass INTEGER, sample TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rollout_samples_by_rollout ON rollout_samples(rollout, at);
)sql";
constexpr const char* kPostgresV6 = R"sql(
ALTER TABLE runs ADD COLUMN IF NOT EXISTS git_ref TEXT, ADD COLUMN IF NOT EXISTS models TEXT;
CREATE TABLE IF NOT EXISTS case_records (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL, "repeat" BIGINT NOT NULL,
  record JSON NOT NULL, PRIMARY KEY (run_id, skill, case_id, "repeat"));
CREATE INDEX IF NOT EXISTS case_records_by_case ON case_records(skill, case_id);
CREATE TABLE IF NOT EXISTS run_measures (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  run_id TEXT NOT NULL, skill TEXT NOT NULL, measure TEXT NOT NULL, successes BIGINT NOT NULL,
  n BIGINT NOT NULL, PRIMARY KEY (run_id, skill, measure));
CREATE TABLE IF NOT EXISTS rollout_points (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  rollout TEXT NOT NULL, skill TEXT NOT NULL, stable_version BIGINT NOT NULL, candidate_version BIGINT NOT NULL,
  at TEXT NOT NULL, kind TEXT NOT NULL, replica TEXT NOT NULL, state TEXT NOT NULL, traffic DOUBLE PRECISION NOT NULL,
  reason TEXT NOT NULL, alpha DOUBLE PRECISION NOT NULL, tau DOUBLE PRECISION NOT NULL, status JSON NOT NULL);
CREATE INDEX IF NOT EXISTS rollout_points_by_rollout ON rollout_points(rollout, at);
CREATE TABLE IF NOT EXISTS rollout_samples (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  rollout TEXT NOT NULL, skill TEXT NOT NULL, arm TEXT NOT NULL, version BIGINT NOT NULL, at TEXT NOT NULL,
  replica TEXT NOT NULL, pass INTEGER, sample JSON NOT NULL);
CREATE INDEX IF NOT EXISTS rollout_samples_by_rollout ON rollout_samples(rollout, at);
)sql";

// 7 (design.md §11.4): the case's own checks, a gate of the paired comparison like the others.
constexpr const char* kSqliteV7 = "ALTER TABLE case_outcomes ADD COLUMN check_ok INTEGER;";
constexpr const char* kPostgresV7 = "ALTER TABLE case_outcomes ADD COLUMN IF NOT EXISTS check_ok INTEGER;";

struct Step {
  const char* sqlite;
  const char* postgres;
};
// Step N brings version N-1 to N.
constexpr std::array<Step, kHistorySchemaVersion> kSteps = {{{kSqliteV1, kPostgresV1},
                                                             {kSqliteV2, kPostgresV2},
                                                             {kSqliteV3, kPostgresV3},
                                                             {kBothV4, kBothV4},
                                                             {kBothV5, kBothV5},
                                                             {kSqliteV6, kPostgresV6},
                                                             {kSqliteV7, kPostgresV7}}};

// Any constant: the key of the advisory lock PostgreSQL writers migrate under.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7268455350)";

Result<void> Upgrade(sql::Db& db) {
  if (db.dialect() == sql::Dialect::kPostgres) {
    if (auto locked = db.Query(kMigrationLock); !locked) return std::unexpected(std::move(locked.error()));
  }
  auto version = KnownSchemaVersion(db);
  if (!version) return std::unexpected(std::move(version.error()));
  if (*version == kHistorySchemaVersion) return {};
  for (int step = *version; step < kHistorySchemaVersion; ++step) {
    const Step& s = kSteps[static_cast<std::size_t>(step)];
    if (auto done = db.Script(db.dialect() == sql::Dialect::kSqlite ? s.sqlite : s.postgres); !done) return done;
  }
  return db.SetSchemaVersion(kHistorySchemaVersion);
}

}  // namespace

Result<int> KnownSchemaVersion(sql::Db& db) {
  auto version = db.SchemaVersion();
  if (!version) return std::unexpected(std::move(version.error()));
  if (*version > kHistorySchemaVersion) {
    return Fail(ErrorCode::kInternal, "schema version " + std::to_string(*version) +
                                          " is newer than this skillrunner understands (" +
                                          std::to_string(kHistorySchemaVersion) + ")");
  }
  return version;
}

Result<void> MigrateHistory(sql::Db& db) {
  return db.Transaction([&db] { return Upgrade(db); });
}

}  // namespace skillrunner::eval
