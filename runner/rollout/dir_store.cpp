// The state dir's rollout store: one JSON file per rollout under
// DIR/rollouts/, replaced whole (written aside, then renamed over), synced
// to disk for decisions.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/rollout/rollout_book.h"

namespace skillrunner::rollout {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// A file name for a rollout key: '/' and ':' are not kept.
std::string FileName(const std::string& name, std::string_view suffix) {
  std::string out;
  for (char c : name) out += c == '/' ? '_' : c == ':' ? '-' : c;
  return out + std::string(suffix);
}

bool WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

class DirStore final : public RolloutStore {
 public:
  explicit DirStore(std::string dir) : dir_(fs::path(std::move(dir)) / "rollouts") {}

  std::optional<json::object> Load(const std::string& name) override { return Read(dir_ / FileName(name, ".json")); }

  void Save(const std::string& name, const json::object& state, bool durable) override {
    Write(dir_ / FileName(name, ".json"), state, durable);
  }

  std::optional<json::object> LoadCommand(const std::string& name) override {
    return Read(dir_ / FileName(name, ".command.json"));
  }

  void SaveCommand(const std::string& name, const json::object& command) override {
    Write(dir_ / FileName(name, ".command.json"), command, true);
  }

 private:
  static std::optional<json::object> Read(const fs::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code ec;
    json::value value = json::parse(text.str(), ec);
    if (ec || !value.is_object()) {
      spdlog::warn("rollout state {}: not a JSON object ({}); ignored", path.string(), ec.message());
      return std::nullopt;
    }
    return std::move(value.as_object());
  }

  void Write(const fs::path& path, const json::object& state, bool durable) const {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    const fs::path aside = path.string() + ".tmp";
    const int fd = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && WriteAll(fd, json::serialize(state) + "\n") && (!durable || ::fsync(fd) == 0);
    if (fd >= 0) ok = ::close(fd) == 0 && ok;
    if (ok) fs::rename(aside, path, ec);
    if (!ok || ec) {
      spdlog::error("rollout state {}: cannot write: {}", path.string(),
                    ec ? ec.message() : std::system_category().message(errno));
    }
  }

  fs::path dir_;
};

}  // namespace

std::unique_ptr<RolloutStore> MakeDirStore(std::string dir) { return std::make_unique<DirStore>(std::move(dir)); }

}  // namespace skillrunner::rollout
