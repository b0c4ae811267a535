#include "runner/eval/history/sql_open.h"

#include "runner/eval/history/pg_db.h"
#include "runner/eval/history/sqlite_sql.h"

namespace skillrunner::eval::sql {

bool IsPostgresUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::string DisplayName(const std::string& location) {
  return IsPostgresUrl(location) ? pg::RedactUrl(location) : location;
}

Result<std::unique_ptr<Db>> Open(const std::string& location, bool read_only, int busy_timeout_ms) {
  if (IsPostgresUrl(location)) return pg::OpenPostgres(location, read_only);
  return OpenSqlite(location, read_only, busy_timeout_ms);
}

}  // namespace skillrunner::eval::sql
