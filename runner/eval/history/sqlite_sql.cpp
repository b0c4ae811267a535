#include "runner/eval/history/sqlite_sql.h"

#include <cstdlib>
#include <filesystem>
#include <map>

#include "runner/eval/history/sqlite_db.h"

namespace skillrunner::eval::sql {

namespace {

class SqliteDb final : public Db {
 public:
  explicit SqliteDb(sqlite::Database db) : db_(std::move(db)) {}

  const std::string& name() const override { return db_.name(); }
  Dialect dialect() const override { return Dialect::kSqlite; }

  Result<Table> Query(std::string_view sql, const std::vector<Value>& params) override {
    auto stmt = Prepared(sql);
    if (!stmt) return std::unexpected(std::move(stmt.error()));
    sqlite::Statement& s = **stmt;
    s.Reset();
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int index = s.ParameterIndex(("$" + std::to_string(i + 1)).c_str());
      if (index == 0) continue;
      const Value& p = params[i];
      if (!p.text) {
        s.BindNull(index);
      } else if (p.integer) {
        s.Bind(index, static_cast<std::int64_t>(std::strtoll(p.text->c_str(), nullptr, 10)));
      } else {
        s.Bind(index, std::string_view(*p.text));
      }
    }
    Table table;
    while (true) {
      auto row = s.Step();
      if (!row) {
        s.Reset();
        return std::unexpected(std::move(row.error()));
      }
      if (!*row) break;
      std::vector<Cell>& values = table.rows.emplace_back();
      for (int c = 0; c < s.ColumnCount(); ++c) values.push_back(s.IsNull(c) ? Cell() : Cell(s.Text(c)));
    }
    s.Reset();
    return table;
  }

  Result<void> Script(std::string_view sql) override { return db_.Exec(std::string(sql)); }

  Result<void> Transaction(const std::function<Result<void>()>& body) override {
    auto transaction = sqlite::Transaction::Begin(db_);
    if (!transaction) return std::unexpected(std::move(transaction.error()));
    if (auto done = body(); !done) return done;
    return transaction->Commit();
  }

  Result<int> SchemaVersion() override { return sqlite::UserVersion(db_); }

  Result<void> SetSchemaVersion(int version) override {
    // Not a value from outside: the compiled-in version number.
    return db_.Exec("PRAGMA user_version = " + std::to_string(version));
  }

 private:
  Result<sqlite::Statement*> Prepared(std::string_view sql) {
    auto it = statements_.find(sql);
    if (it == statements_.end()) {
      auto stmt = db_.Prepare(sql);
      if (!stmt) return std::unexpected(std::move(stmt.error()));
      it = statements_.emplace(std::string(sql), std::move(*stmt)).first;
    }
    return &it->second;
  }

  // Declared first, so the statements are finalized before the connection closes.
  sqlite::Database db_;
  std::map<std::string, sqlite::Statement, std::less<>> statements_;
};

}  // namespace

Result<std::unique_ptr<Db>> OpenSqlite(const std::string& file, bool read_only, int busy_timeout_ms) {
  if (read_only) {
    auto db = sqlite::Database::OpenReadOnly(file, busy_timeout_ms);
    if (!db) return std::unexpected(std::move(db.error()));
    return std::unique_ptr<Db>(new SqliteDb(std::move(*db)));
  }
  const std::filesystem::path folder = std::filesystem::path(file).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
    return Fail(ErrorCode::kConfigInvalid, "folder " + folder.string() + " does not exist");
  }
  auto db = sqlite::Database::Open(file, busy_timeout_ms);
  if (!db) return std::unexpected(std::move(db.error()));
  // WAL lets readers go on while a shard writes; it needs the folder to be writable for its -wal and -shm files.
  if (auto wal = db->Exec("PRAGMA journal_mode = WAL"); !wal) return std::unexpected(std::move(wal.error()));
  return std::unique_ptr<Db>(new SqliteDb(std::move(*db)));
}

}  // namespace skillrunner::eval::sql
