#pragma once

// sql::Db on an SQLite file (sqlite_db.h): each statement prepared once and
// kept, its $N parameters bound by name, WAL mode and a busy timeout so that
// shards writing one file wait for each other.

#include <memory>
#include <string>

#include "runner/eval/history/sql_db.h"

namespace skillrunner::eval::sql {

// CONFIG_INVALID when the file's folder does not exist (or, read-only, the file); else INTERNAL.
Result<std::unique_ptr<Db>> OpenSqlite(const std::string& file, bool read_only, int busy_timeout_ms);

}  // namespace skillrunner::eval::sql
