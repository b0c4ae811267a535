#pragma once

// A thin RAII layer over the SQLite C API for the eval history: one
// connection, prepared statements with bound parameters (values never go into
// SQL text), and a transaction guard. Errors are INTERNAL with SQLite's own
// messages; the caller adds which file and what it was doing. Internal to
// runner/eval; not thread-safe.

#include <sqlite3.h>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "services/common/error.h"

namespace skillrunner::eval::sqlite {

class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite. A failed bind is reported by the
  // next Step or Run.
  void Bind(int index, std::string_view text);
  void Bind(int index, std::int64_t value);
  void Bind(int index, std::optional<std::int64_t> value);
  void BindNull(int index);
  void BindReal(int index, std::optional<double> value);  // NULL when empty

  // One step: true when a row is ready, false when the statement is done.
  Result<bool> Step();
  // Steps to the end, then resets the statement and clears its bindings so
  // it can run again with new values.
  Result<void> Run();
  void Reset();

  // The index of a named parameter ("$1"), 0 when the statement has none of that name.
  int ParameterIndex(const char* name) const;
  int ColumnCount() const;

  std::string Text(int column) const;  // "" for NULL
  std::int64_t Int(int column) const;
  double Real(int column) const;
  bool IsNull(int column) const;

 private:
  std::string Failure(int rc) const;

  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

class Database {
 public:
  // Opens (creating) the file read-write, with a busy timeout so that other
  // writers make this one wait instead of fail.
  static Result<Database> Open(const std::filesystem::path& file, int busy_timeout_ms);
  // Opens an existing file read-only (SQLITE_OPEN_READONLY): nothing this
  // connection does can change it. Where even that cannot read (a WAL file in
  // a folder this user may not write, so no -shm can be made), opens it as
  // immutable instead (the URI parameter immutable=1: no locks, and changes
  // other writers make meanwhile may not be seen).
  static Result<Database> OpenReadOnly(const std::filesystem::path& file, int busy_timeout_ms);
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&&) = delete;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs SQL that carries no values (schema, pragmas, BEGIN/COMMIT).
  Result<void> Exec(const std::string& sql);
  Result<Statement> Prepare(std::string_view sql);
  const std::string& name() const { return name_; }

 private:
  Database(sqlite3* db, std::string name) : db_(db), name_(std::move(name)) {}
  std::string Failure() const;

  sqlite3* db_;
  std::string name_;
};

// PRAGMA user_version: the schema version the file was written at (0 when new).
Result<int> UserVersion(Database& db);

// BEGIN IMMEDIATE on construction (takes the write lock up front, so two
// writers never deadlock upgrading read locks); ROLLBACK on destruction unless
// Commit succeeded.
class Transaction {
 public:
  static Result<Transaction> Begin(Database& db);
  ~Transaction();
  Transaction(Transaction&& other) noexcept : db_(other.db_), done_(other.done_) { other.done_ = true; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Result<void> Commit();

 private:
  explicit Transaction(Database& db) : db_(&db) {}
  Database* db_;
  bool done_ = false;
};

}  // namespace skillrunner::eval::sqlite
