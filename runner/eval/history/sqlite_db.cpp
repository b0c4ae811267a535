#include "runner/eval/history/sqlite_db.h"

#include <utility>

namespace skillrunner::eval::sqlite {

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), bind_rc_(other.bind_rc_) {}

void Statement::Bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::Bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::Bind(int index, std::optional<std::int64_t> value) {
  if (value) {
    Bind(index, *value);
  } else {
    BindNull(index);
  }
}

void Statement::BindReal(int index, std::optional<double> value) {
  if (!value) return BindNull(index);
  int rc = sqlite3_bind_double(stmt_, index, *value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

std::string Statement::Failure(int rc) const {
  std::string message;
  sqlite3* db = sqlite3_db_handle(stmt_);
  message += (db != nullptr && rc == sqlite3_errcode(db)) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return message;
}

Result<bool> Statement::Step() {
  if (bind_rc_ != SQLITE_OK) return Fail(ErrorCode::kInternal, Failure(bind_rc_));
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Fail(ErrorCode::kInternal, Failure(rc));
}

Result<void> Statement::Run() {
  while (true) {
    auto row = Step();
    if (!row) {
      Reset();
      return std::unexpected(std::move(row.error()));
    }
    if (!*row) break;
  }
  Reset();
  return {};
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_rc_ = SQLITE_OK;
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

int Statement::ParameterIndex(const char* name) const { return sqlite3_bind_parameter_index(stmt_, name); }

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

double Statement::Real(int column) const { return sqlite3_column_double(stmt_, column); }

bool Statement::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Result<Database> Database::Open(const std::filesystem::path& file, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Fail(ErrorCode::kInternal, std::move(message));
  }
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return Database(db, file.string());
}

namespace {

Result<sqlite3*> OpenWith(const std::string& name, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Fail(ErrorCode::kInternal, std::move(message));
  }
  return db;
}

// A file: URI for `file` (RFC 3986 escapes for what a URI path cannot hold).
std::string FileUri(const std::filesystem::path& file, std::string_view query) {
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(file).string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x21 || c > 0x7e) {
      constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xf];
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?" + std::string(query);
}

bool CanRead(sqlite3* db) {
  return sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) == SQLITE_OK;
}

}  // namespace

Result<Database> Database::OpenReadOnly(const std::filesystem::path& file, int busy_timeout_ms) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return Fail(ErrorCode::kConfigInvalid, "no such file");
  auto db = OpenWith(FileUri(file, "mode=ro"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  if (db && CanRead(*db)) {
    sqlite3_busy_timeout(*db, busy_timeout_ms);
    return Database(*db, file.string());
  }
  if (db) sqlite3_close_v2(*db);
  db = OpenWith(FileUri(file, "immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  if (!db) return std::unexpected(std::move(db.error()));
  if (!CanRead(*db)) {
    std::string message = sqlite3_errmsg(*db);
    sqlite3_close_v2(*db);
    return Fail(ErrorCode::kInternal, std::move(message));
  }
  return Database(*db, file.string());
}

Database::~Database() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)), name_(std::move(other.name_)) {}

std::string Database::Failure() const { return sqlite3_errmsg(db_); }

Result<void> Database::Exec(const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return {};
  std::string message = error ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  return Fail(ErrorCode::kInternal, std::move(message));
}

Result<Statement> Database::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Fail(ErrorCode::kInternal, Failure());
  }
  return Statement(stmt);
}

Result<int> UserVersion(Database& db) {
  auto stmt = db.Prepare("PRAGMA user_version");
  if (!stmt) return std::unexpected(std::move(stmt.error()));
  auto row = stmt->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  return *row ? static_cast<int>(stmt->Int(0)) : 0;
}

Result<Transaction> Transaction::Begin(Database& db) {
  if (auto begun = db.Exec("BEGIN IMMEDIATE"); !begun) return std::unexpected(std::move(begun.error()));
  return Transaction(db);
}

Transaction::~Transaction() {
  if (!done_) (void)db_->Exec("ROLLBACK");
}

Result<void> Transaction::Commit() {
  auto committed = db_->Exec("COMMIT");
  if (committed) done_ = true;
  return committed;
}

}  // namespace skillrunner::eval::sqlite
