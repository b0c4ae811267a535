#pragma once

// sql::Db on PostgreSQL through libpq (design.md §11.3): one connection,
// statements sent with their parameters apart from the SQL text, results as
// text. A transaction that meets another writer's (SQLSTATE 40001
// serialization failure, 40P01 deadlock) is run again, three times in all.
// The password comes only from PGPASSWORD or PGPASSFILE: a URL that holds one
// is refused, and messages show the URL without it.

#include <memory>
#include <string>
#include <string_view>

#include "runner/eval/history/sql_db.h"

namespace skillrunner::eval::pg {

// The URL without its password (postgresql://user:***@host/db).
std::string RedactUrl(std::string_view url);

// `read_only`: every transaction of the session is READ ONLY.
Result<std::unique_ptr<sql::Db>> OpenPostgres(const std::string& url, bool read_only);

}  // namespace skillrunner::eval::pg
