#pragma once

// Opening the history's database by where it is: SQLite for a file, PostgreSQL for a URL. Apart
// from sql_db.h, which both dialects implement, so that the interface knows no dialect.

#include <memory>
#include <string>
#include <string_view>

#include "runner/eval/history/sql_db.h"

namespace skillrunner::eval::sql {

// `location` is a file (SQLite: created when absent unless read-only; its folder must exist) or a
// postgresql:// URL. `read_only`: nothing this connection does can change the database.
Result<std::unique_ptr<Db>> Open(const std::string& location, bool read_only, int busy_timeout_ms);

// Whether `location` names a PostgreSQL database (postgresql:// or postgres://).
bool IsPostgresUrl(std::string_view location);
// `location` as messages show it: a URL without its password.
std::string DisplayName(const std::string& location);

}  // namespace skillrunner::eval::sql
