#pragma once

// The history's tables and their migrations, per dialect under the same
// numbers (design.md §11.3): version N means the same tables in SQLite and in
// PostgreSQL. Internal to runner/eval/history.

#include "runner/eval/history/sql_db.h"

namespace skillrunner::eval {

// The schema this program writes. Bump when the schema changes, and add a migration step in
// history_schema.cpp.
inline constexpr int kHistorySchemaVersion = 7;

// The schema version the database was written at; INTERNAL when it is newer than this program.
Result<int> KnownSchemaVersion(sql::Db& db);

// Creates or upgrades the schema to kHistorySchemaVersion inside one write transaction, so that
// two writers opening a new history at once do not both create it (PostgreSQL: under an advisory
// lock). INTERNAL when the schema is newer than this program.
Result<void> MigrateHistory(sql::Db& db);

}  // namespace skillrunner::eval
