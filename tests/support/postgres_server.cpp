#include "tests/support/postgres_server.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "tests/support/child_process.h"

namespace skillrunner::test_support {
namespace {

constexpr std::string_view kUriPrefix = "postgresql:///";
// createdb copies template0 in well under a second; a minute means the
// server is stuck, and the test should fail rather than hang the run.
constexpr auto kToolTimeout = std::chrono::seconds(60);

std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// DIR/env: NAME=value lines (postgres_cluster.sh writes them unquoted).
std::map<std::string, std::string> ReadSettings(const std::filesystem::path& file) {
  std::map<std::string, std::string> settings;
  std::istringstream lines(ReadWhole(file));
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    settings[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return settings;
}

// RFC 3986 percent-encoding of everything but unreserved characters and '/'
// (libpq decodes every part of a URI; a socket folder is a path).
std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The database name in a URI that Uri() made, or "".
std::string DatabaseOf(const std::string& uri) {
  if (!uri.starts_with(kUriPrefix)) return "";
  std::string rest = uri.substr(kUriPrefix.size());
  return rest.substr(0, rest.find('?'));
}

// A per-process tag, so a pid the kernel reuses later in the same run does
// not repeat a name.
const std::string& ProcessTag() {
  static const std::string tag = [] {
    std::random_device random;
    std::ostringstream hex;
    hex << std::hex << (random() & 0xffffff);
    return std::to_string(::getpid()) + "_" + hex.str();
  }();
  return tag;
}

}  // namespace

std::string DatabaseNameFor(std::string_view name, std::size_t max_length) {
  std::string out = "t_";
  for (unsigned char c : name) {
    char mapped = std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '_';
    if (mapped == '_' && out.back() == '_') continue;  // "Suite.Test/0" -> "suite_test_0"
    out += mapped;
  }
  if (out.size() > max_length) out.resize(max_length);
  while (out.size() > 2 && out.back() == '_') out.pop_back();
  return out;
}

const PostgresCluster& PostgresCluster::Shared() {
  static const PostgresCluster cluster = [] {
    const char* dir = std::getenv("SKILLRUNNER_TEST_PG_DIR");
    if (dir == nullptr || *dir == '\0') {
      PostgresCluster none{std::filesystem::path{}};
      none.why_ =
          "SKILLRUNNER_TEST_PG_DIR is not set: run the test through ctest (its postgres_cluster fixture starts "
          "PostgreSQL), or run `bash scripts/postgres_cluster.sh start DIR` and set SKILLRUNNER_TEST_PG_DIR=DIR";
      return none;
    }
    PostgresCluster cluster{std::filesystem::path(dir)};
    cluster.expected_ = true;
    return cluster;
  }();
  return cluster;
}

PostgresCluster::PostgresCluster(const std::filesystem::path& dir) {
  if (dir.empty()) {
    why_ = "no cluster folder given";
    return;
  }
  std::filesystem::path env_file = dir / "env";
  settings_ = ReadSettings(env_file);
  host_ = settings_["PGHOST"];
  port_ = settings_["PGPORT"];
  user_ = settings_["PGUSER"];
  bin_dir_ =
      settings_.contains("SKILLRUNNER_PG_BINDIR") ? settings_["SKILLRUNNER_PG_BINDIR"] : "/usr/lib/postgresql/15/bin";
  settings_.erase("SKILLRUNNER_PG_BINDIR");  // ours, not libpq's
  if (host_.empty() || port_.empty() || user_.empty()) {
    why_ = env_file.string() + " is missing or lacks PGHOST, PGPORT or PGUSER: is the cluster started " +
           "(bash scripts/postgres_cluster.sh start " + dir.string() + ")?";
    return;
  }
  for (const char* tool : {"pg_isready", "createdb", "dropdb", "psql"}) {
    if (::access((bin_dir_ + "/" + tool).c_str(), X_OK) != 0) {
      why_ = bin_dir_ + "/" + tool + " is missing: install postgresql (scripts/setup.sh does with WITH_TESTS=1)";
      return;
    }
  }
  PsqlResult ready = RunTool("pg_isready", {"-d", Uri("postgres")});
  if (ready.exit_code != 0) {
    why_ = "the PostgreSQL server in " + host_ + " does not answer (pg_isready: " + ready.out + ready.err + ")";
    return;
  }
  available_ = true;
}

std::string PostgresCluster::Uri(std::string_view database) const {
  return std::string(kUriPrefix) + std::string(database) + "?host=" + PercentEncode(host_) +
         "&port=" + PercentEncode(port_) + "&user=" + PercentEncode(user_);
}

std::string PostgresCluster::NewDatabase(std::string_view test_name) const {
  if (!available_) throw std::runtime_error("PostgreSQL is not available: " + why_);
  static std::atomic<unsigned> counter{0};
  std::string suffix = "_" + ProcessTag() + "_" + std::to_string(++counter);
  // 63: PostgreSQL's NAMEDATALEN - 1; longer names would be cut silently.
  std::string name = DatabaseNameFor(test_name, 63 - suffix.size()) + suffix;
  // template0: no session ever connects to it, so parallel tests never trip
  // "source database is being accessed by other users"; and it is pristine.
  PsqlResult created = RunTool("createdb", {"--template=template0", "--encoding=UTF8", name});
  if (created.exit_code != 0) {
    throw std::runtime_error("createdb " + name + " failed (exit " + std::to_string(created.exit_code) +
                             "): " + created.err);
  }
  return Uri(name);
}

void PostgresCluster::DropDatabase(const std::string& uri) const {
  std::string name = DatabaseOf(uri);
  // Only the names NewDatabase makes: never postgres or a template.
  bool made_here = name.starts_with("t_") && name.size() <= 63 &&
                   name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
  if (!made_here) {
    throw std::runtime_error("DropDatabase: " + uri + " is not a database NewDatabase made");
  }
  PsqlResult dropped = RunTool("dropdb", {"--if-exists", "--force", name});
  if (dropped.exit_code != 0) throw std::runtime_error("dropdb " + name + " failed: " + dropped.err);
}

std::string PostgresCluster::Psql(const std::string& uri, const std::string& sql) const {
  PsqlResult result = RunPsql(uri, sql);
  if (result.exit_code != 0) {
    throw std::runtime_error("psql failed (exit " + std::to_string(result.exit_code) + ") on `" + sql +
                             "`: " + result.err);
  }
  return result.out;
}

PsqlResult PostgresCluster::RunPsql(const std::string& uri, const std::string& sql) const {
  // -X: no ~/.psqlrc; -A -t: bare rows; -q: no command tags ("INSERT 0 1").
  return RunTool("psql", {"-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql});
}

PsqlResult PostgresCluster::RunTool(const std::string& tool, const std::vector<std::string>& args) const {
  // The caller's PG* variables (PGPASSWORD, PGSERVICE, PGOPTIONS...) would
  // change what the tool connects to; only the cluster's own go through.
  std::vector<std::string> env;
  for (std::string& entry : CleanEnvironment()) {
    if (!entry.starts_with("PG")) env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : settings_) env.push_back(name + "=" + value);
  std::string pattern = (std::filesystem::temp_directory_path() / "skillrunner-pg-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary folder");
  std::filesystem::path out_dir = pattern;
  PsqlResult result;
  {
    ChildProcess child(bin_dir_ + "/" + tool, args, env, {}, out_dir / "stdout", out_dir / "stderr");
    if (child.pid() <= 0) {
      result.err = "could not start " + bin_dir_ + "/" + tool + ". ";
    } else if ((result.exit_code = child.Wait(kToolTimeout)) == -1) {
      // The destructor kills it, on leaving this block.
      result.err = tool + " did not end within 60 s (killed). ";
    }
  }
  result.out = ReadWhole(out_dir / "stdout");
  if (result.out.ends_with('\n')) result.out.pop_back();
  result.err += ReadWhole(out_dir / "stderr");
  std::error_code ignored;
  std::filesystem::remove_all(out_dir, ignored);
  return result;
}

}  // namespace skillrunner::test_support
