#pragma once

// The real PostgreSQL cluster that ctest's postgres_cluster fixture starts
// once per run (scripts/postgres_cluster.sh): a Unix socket only, trust auth,
// superuser skillrunner. Each test takes a fresh, empty database of its own
// with NewDatabase, so tests running in parallel never see each other's rows.
//
//   const auto& pg = test_support::PostgresCluster::Shared();
//   SKILLRUNNER_NEED_POSTGRES(pg);  // skips by hand outside ctest, fails under it
//   std::string uri = pg.NewDatabase("PostgresHistoryTest.Appends");
//   ... open `uri` with libpq ...
//   EXPECT_EQ(pg.Psql(uri, "SELECT count(*) FROM runs"), "3");
//
// Failures (createdb or psql exiting non-zero, a program hanging) throw
// std::runtime_error with the program's stderr: GoogleTest reports it as the
// test's failure.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::test_support {

// What psql did: its exit status (-1: it did not end in time) and output.
struct PsqlResult {
  int exit_code = -1;
  std::string out;  // stdout without its last newline
  std::string err;
};

class PostgresCluster {
 public:
  // The cluster of the ctest fixture, from the folder SKILLRUNNER_TEST_PG_DIR
  // names (ctest sets it for the tests that require the fixture).
  static const PostgresCluster& Shared();

  // The cluster that `postgres_cluster.sh start dir` started; not available
  // (why() says why) when dir/env is missing or the server does not answer.
  explicit PostgresCluster(const std::filesystem::path& dir);

  bool available() const { return available_; }
  // Whether ctest promised a cluster (SKILLRUNNER_TEST_PG_DIR was set): then
  // an unavailable one is a failure, not a reason to skip.
  bool expected() const { return expected_; }
  const std::string& why() const { return why_; }
  const std::string& host() const { return host_; }  // the socket's folder
  const std::string& port() const { return port_; }
  const std::string& user() const { return user_; }

  // A libpq URI for `database` on this cluster (the socket folder as the host
  // query parameter, percent-encoded).
  std::string Uri(std::string_view database) const;

  // Creates an empty database named after `test_name`, this process and a
  // counter (unique across the run; [a-z0-9_], at most 63 characters) and
  // returns its URI.
  std::string NewDatabase(std::string_view test_name) const;

  // Drops a database NewDatabase made (its URI), for tests that make many:
  // each empty database takes about 8 MB until the cluster goes.
  void DropDatabase(const std::string& uri) const;

  // psql -X -A -t -q -v ON_ERROR_STOP=1 -c sql against `uri`: the rows, one
  // a line, columns separated by '|'. Throws when psql fails.
  std::string Psql(const std::string& uri, const std::string& sql) const;
  // The same, without throwing: for tests that expect SQL to fail.
  PsqlResult RunPsql(const std::string& uri, const std::string& sql) const;

 private:
  // Runs a program from the cluster's bin folder with the cluster's PG*
  // settings and nothing else of the caller's PG* environment.
  PsqlResult RunTool(const std::string& tool, const std::vector<std::string>& args) const;

  bool available_ = false;
  bool expected_ = false;
  std::string why_;
  std::map<std::string, std::string> settings_;  // DIR/env
  std::string bin_dir_;
  std::string host_, port_, user_;
};

// `name` as a database name: lower case, [a-z0-9_] (others become '_'),
// starting with a letter, at most `max_length` characters. Exposed for tests.
std::string DatabaseNameFor(std::string_view name, std::size_t max_length);

}  // namespace skillrunner::test_support

// In a test body or SetUp: skips (with why()) when the test runs by hand
// without SKILLRUNNER_TEST_PG_DIR, and fails when ctest set it but the cluster
// is not there, so a broken fixture never passes as skipped tests.
#define SKILLRUNNER_NEED_POSTGRES(cluster) \
  do {                                     \
    if (!(cluster).available()) {          \
      if ((cluster).expected()) {          \
        FAIL() << (cluster).why();         \
      } else {                             \
        GTEST_SKIP() << (cluster).why();   \
      }                                    \
    }                                      \
  } while (false)
