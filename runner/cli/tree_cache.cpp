#include "runner/cli/tree_cache.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "runner/cli/run_program.h"
#include "runner/tree/tree_index.h"
#include "services/common/digest.h"

namespace skillrunner::cli {
namespace fs = std::filesystem;
namespace {

// Each tree `run` saw keeps its own index; the oldest beyond this many go.
constexpr std::size_t kMaxIndexes = 64;

// The binary that is running: its version, where it is and its own stamp,
// so that a rebuilt or upgraded binary never trusts an older one's index.
std::string BinaryIdentity() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  auto stamp = StampOf("/proc/self/exe");
  std::string out = std::string("skillrunner ") + SKILLRUNNER_VERSION + " " + exe.string();
  if (stamp) out += " " + std::to_string(stamp->size) + " " + std::to_string(stamp->mtime_ns);
  return out;
}

// The tree's place: what names the index file.
std::string Location(const CommonOptions& options, const Config& config) {
  std::error_code ec;
  return "cwd=" + fs::current_path(ec).string() + "\nskills=" + options.skills_dir +
         "\nrubrics=" + options.rubrics_dir + "\nconfig=" + config.source + "\n";
}

// Everything besides the tree's files that the load depended on; nullopt
// when the config file may have changed within the clock tick it was read in.
std::optional<std::string> Identity(const CommonOptions& options, const Config& config, std::int64_t started_ns) {
  std::string out = BinaryIdentity() + "\n" + Location(options, config);
  if (!config.builtin) {
    auto stamp = StampOf(config.source);
    if (!stamp || stamp->mtime_ns >= started_ns) return std::nullopt;
    out += "config_stamp=" + std::to_string(stamp->size) + " " + std::to_string(stamp->mtime_ns) + "\n";
  }
  std::string provider = options.provider;
  if (provider.empty()) provider = ProcessEnv("SKILLRUNNER_PROVIDER").value_or("");
  return out + "provider=" + provider + "\n";
}

// Keeps the kMaxIndexes most recently written indexes of `dir`.
void Prune(const fs::path& dir) {
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("tree-") || !name.ends_with(".json")) continue;
    std::error_code time_ec;
    files.emplace_back(it->last_write_time(time_ec), it->path());
  }
  if (files.size() <= kMaxIndexes) return;
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = kMaxIndexes; i < files.size(); ++i) fs::remove(files[i].second, ec);
}

// Writes `text` to `file` whole or not at all (a temporary file renamed).
void WriteIndex(const fs::path& file, const std::string& text) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  fs::path temporary = file;
  temporary += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      spdlog::debug("tree index: cannot write {}; next time a full load again", temporary.string());
      fs::remove(temporary, ec);
      return;
    }
  }
  fs::rename(temporary, file, ec);
  if (ec) {
    spdlog::debug("tree index: cannot write {}: {}", file.string(), ec.message());
    fs::remove(temporary, ec);
    return;
  }
  spdlog::debug("tree index: written to {}", file.string());
  Prune(file.parent_path());
}

// The registry from the index in `file`, or why not.
std::expected<SkillRegistry::LoadResult, std::string> LoadIndexed(const fs::path& file, const std::string& identity,
                                                                  const RegistryOptions& registry_options,
                                                                  const Config& config, std::string_view skill) {
  auto text = ReadFileText(file);
  if (!text) return std::unexpected("none at " + file.string());
  auto index = TreeIndexFromJson(*text);
  if (!index) return std::unexpected(file.string() + " is not an index this binary reads");
  if (index->identity != identity) return std::unexpected("the binary, the config or --provider changed");
  if (auto change = TreeChange(*index, registry_options); !change.empty()) return std::unexpected(change);
  auto loaded = LoadFromIndex(*index, registry_options, config, skill);
  if (!loaded) return std::unexpected("it does not know a skill \"" + std::string(skill) + "\"");
  return std::move(*loaded);
}

}  // namespace

std::optional<fs::path> TreeCacheDir(const EnvLookup& env) {
  if (auto off = env("SKILLRUNNER_NO_TREE_CACHE"); off && !off->empty()) return std::nullopt;
  if (auto xdg = env("XDG_CACHE_HOME"); xdg && !xdg->empty()) return fs::path(*xdg) / "skillrunner";
  if (auto home = env("HOME"); home && !home->empty()) return fs::path(*home) / ".cache" / "skillrunner";
  return std::nullopt;
}

SkillRegistry::LoadResult LoadRegistryForRun(const CommonOptions& options, Config config, std::string_view skill,
                                             const std::optional<fs::path>& cache_dir, std::int64_t started_ns) {
  if (!cache_dir) return LoadRegistry(options, std::move(config));
  RegistryOptions registry_options = RegistryOptionsFor(options);
  auto identity = Identity(options, config, started_ns);
  fs::path file = *cache_dir / ("tree-" + Sha256Hex(Location(options, config)).substr(0, 32) + ".json");
  if (identity) {
    auto indexed = LoadIndexed(file, *identity, registry_options, config, skill);
    if (indexed) {
      spdlog::debug("tree index: the tree is unchanged since {} was written; loaded skill \"{}\" alone", file.string(),
                    skill);
      return std::move(*indexed);
    }
    spdlog::debug("tree index: {}; loading the whole tree", indexed.error());
  }
  auto loaded = LoadRegistry(options, config);
  auto index = identity ? IndexTree(registry_options, loaded, *identity, started_ns) : std::nullopt;
  if (index) {
    WriteIndex(file, TreeIndexToJson(*index));
  } else {
    spdlog::debug("tree index: not written (the tree has errors, or a file changed while it loaded)");
  }
  return loaded;
}

}  // namespace skillrunner::cli
