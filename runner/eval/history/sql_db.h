#pragma once

// The history's one way to talk to its database, SQLite (a file, the
// embedded default) or PostgreSQL (a postgresql:// URL, for many writers):
// design.md §11.3. Every statement of the history is written once, in the SQL
// both accept (parameters $1, $2, ...; upserts with ON CONFLICT; JSON members
// read with ->>), and run through this interface; only the migrations' DDL
// and the schema version's place differ by dialect. Results come back as
// text, NULL kept apart. Not thread-safe: one Db per thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::eval::sql {

// A value read back: text, or NULL.
using Cell = std::optional<std::string>;

// A parameter: text or NULL, and whether it is a whole number. SQLite compares a text parameter
// with an expression that has no column's type (LIMIT, a window function's result) as text, so a
// whole number is bound as one; PostgreSQL takes every parameter as text and types it itself.
struct Value {
  Cell text;
  bool integer = false;
  Value() = default;
  Value(std::nullopt_t) {}  // NOLINT: NULL, as std::nullopt reads
  explicit Value(Cell value, bool whole = false) : text(std::move(value)), integer(whole) {}
};

Value Text(std::string_view text);
Value Int(std::int64_t value);
Value Int(std::optional<std::int64_t> value);
Value Real(std::optional<double> value);

struct Table {
  std::vector<std::vector<Cell>> rows;

  std::size_t size() const { return rows.size(); }
  bool empty() const { return rows.empty(); }
  std::string TextAt(std::size_t row, std::size_t column) const;  // "" for NULL
  std::int64_t IntAt(std::size_t row, std::size_t column) const;  // 0 for NULL
  bool IsNull(std::size_t row, std::size_t column) const;
};

enum class Dialect { kSqlite, kPostgres };

class Db {
 public:
  virtual ~Db() = default;
  // The file, or the URL without its password.
  virtual const std::string& name() const = 0;
  virtual Dialect dialect() const = 0;
  // One statement ($1.. are `params`). Errors are INTERNAL with the database's message.
  virtual Result<Table> Query(std::string_view sql, const std::vector<Value>& params = {}) = 0;
  // Statements that carry no values, separated by ";" (the migrations' DDL).
  virtual Result<void> Script(std::string_view sql) = 0;
  // `body` in one write transaction: committed when it succeeds, rolled back when it fails. A
  // transaction that met another writer's (PostgreSQL 40001, 40P01) is run again, three times in all.
  virtual Result<void> Transaction(const std::function<Result<void>()>& body) = 0;
  // The schema version the database was written at (0 when new), and setting it (inside a transaction).
  virtual Result<int> SchemaVersion() = 0;
  virtual Result<void> SetSchemaVersion(int version) = 0;
};

}  // namespace skillrunner::eval::sql
