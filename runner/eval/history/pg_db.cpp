#include "runner/eval/history/pg_db.h"

#include <libpq-fe.h>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <utility>

namespace skillrunner::eval::pg {

std::string RedactUrl(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed || !parsed->has_password()) return std::string(url);
  boost::urls::url redacted(*parsed);
  redacted.set_password("***");
  return std::string(redacted.buffer());
}

namespace {

// libpq's messages end with a newline; ours do not.
std::string Trimmed(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool IsRetryable(const Error& error) {
  const boost::json::value* state = error.details.if_contains("sqlstate");
  return state != nullptr && state->is_string() && (state->as_string() == "40001" || state->as_string() == "40P01");
}

sql::Table TableOf(PGresult* result) {
  sql::Table table;
  const int rows = PQntuples(result), columns = PQnfields(result);
  table.rows.resize(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    auto& values = table.rows[static_cast<std::size_t>(r)];
    for (int c = 0; c < columns; ++c) {
      if (PQgetisnull(result, r, c)) {
        values.emplace_back();
      } else {
        values.emplace_back(std::string(PQgetvalue(result, r, c), static_cast<std::size_t>(PQgetlength(result, r, c))));
      }
    }
  }
  return table;
}

class PgDb final : public sql::Db {
 public:
  PgDb(PGconn* conn, std::string name) : conn_(conn), name_(std::move(name)) {}
  ~PgDb() override { PQfinish(conn_); }
  PgDb(const PgDb&) = delete;
  PgDb& operator=(const PgDb&) = delete;

  const std::string& name() const override { return name_; }
  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }

  Result<sql::Table> Query(std::string_view sql, const std::vector<sql::Value>& params) override {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const sql::Value& p : params) values.push_back(p.text ? p.text->c_str() : nullptr);
    const std::string text(sql);
    PGresult* result =
        PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      sql::Table table = TableOf(result);
      PQclear(result);
      return table;
    }
    return Failure(result);
  }

  Result<void> Script(std::string_view sql) override {
    const std::string text(sql);
    PGresult* result = PQexec(conn_, text.c_str());
    if (PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK) {
      PQclear(result);
      return {};
    }
    return Failure(result);
  }

  Result<void> Transaction(const std::function<Result<void>()>& body) override {
    constexpr int kTries = 3;
    Result<void> outcome;
    for (int attempt = 1; attempt <= kTries; ++attempt) {
      if (auto begun = Script("BEGIN"); !begun) return begun;
      outcome = body();
      if (outcome) outcome = Script("COMMIT");
      if (outcome) return outcome;
      (void)Script("ROLLBACK");  // after a failed COMMIT there is nothing to roll back; harmless
      if (!IsRetryable(outcome.error())) return outcome;
    }
    return outcome;
  }

  Result<int> SchemaVersion() override {
    auto exists = Query("SELECT to_regclass('skillrunner_schema') IS NOT NULL", {});
    if (!exists) return std::unexpected(std::move(exists.error()));
    if (exists->TextAt(0, 0) != "t") return 0;
    auto version = Query("SELECT max(version) FROM skillrunner_schema", {});
    if (!version) return std::unexpected(std::move(version.error()));
    return static_cast<int>(version->IntAt(0, 0));
  }

  Result<void> SetSchemaVersion(int version) override {
    if (auto made = Script("CREATE TABLE IF NOT EXISTS skillrunner_schema (version INTEGER NOT NULL)"); !made) {
      return made;
    }
    if (auto cleared = Script("DELETE FROM skillrunner_schema"); !cleared) return cleared;
    auto set = Query("INSERT INTO skillrunner_schema (version) VALUES ($1)", {sql::Int(std::int64_t{version})});
    if (!set) return std::unexpected(std::move(set.error()));
    return {};
  }

 private:
  std::unexpected<Error> Failure(PGresult* result) {
    Error error{ErrorCode::kInternal, Trimmed(result ? PQresultErrorMessage(result) : nullptr), {}, {}};
    if (error.message.empty()) error.message = Trimmed(PQerrorMessage(conn_));
    if (const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr) {
      error.details["sqlstate"] = state;
    }
    PQclear(result);
    return std::unexpected(std::move(error));
  }

  PGconn* conn_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<sql::Db>> OpenPostgres(const std::string& url, bool read_only) {
  const std::string name = RedactUrl(url);
  if (auto parsed = boost::urls::parse_uri(url); parsed && parsed->has_password()) {
    return Fail(ErrorCode::kConfigInvalid, "the history URL " + name +
                                               " holds a password: give it through PGPASSWORD or PGPASSFILE instead "
                                               "(a URL is shown in messages and logs)");
  }
  PGconn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr) return Fail(ErrorCode::kInternal, "out of memory connecting to " + name);
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return Fail(ErrorCode::kInternal, std::move(message));
  }
  auto db = std::make_unique<PgDb>(conn, name);
  // Quiet: the migrations' "already exists, skipping" notices are not for the user.
  if (auto quiet = db->Script("SET client_min_messages = warning"); !quiet) return std::unexpected(quiet.error());
  if (read_only) {
    if (auto ro = db->Script("SET default_transaction_read_only = on"); !ro) return std::unexpected(ro.error());
  }
  return std::unique_ptr<sql::Db>(std::move(db));
}

}  // namespace skillrunner::eval::pg
