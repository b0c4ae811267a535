#include "runner/eval/history/sql_db.h"

#include <cstdlib>

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

}  // namespace skillrunner::eval::sql
