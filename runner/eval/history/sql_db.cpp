#include "runner/eval/history/sql_db.h"

#include <cstdlib>

#include "runner/eval/history/pg_db.h"
#include "runner/eval/history/sqlite_sql.h"

namespace skillrunner::eval::sql {

Value Text(std::string_view text) { return Value(std::string(text)); }
Value Int(std::int64_t value) { return Value(std::to_string(value), true); }
Value Int(std::optional<std::int64_t> value) { return value ? Int(*value) : Value(); }
Value Real(std::optional<double> value) {
  if (!value) return std::nullopt;
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", *value);
  return Value(std::string(text));
}

std::string Table::TextAt(std::size_t row, std::size_t column) const { return rows[row][column].value_or(""); }

std::int64_t Table::IntAt(std::size_t row, std::size_t column) const {
  const Cell& value = rows[row][column];
  return value ? std::strtoll(value->c_str(), nullptr, 10) : 0;
}

bool Table::IsNull(std::size_t row, std::size_t column) const { return !rows[row][column].has_value(); }

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
