#include "runner/cli/rollout_store.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>

#include "runner/rollout/shared_rollouts.h"

namespace skillrunner::cli {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

class DirSource final : public RolloutStateSource {
 public:
  explicit DirSource(std::string dir) : dir_(std::move(dir)) {}
  std::shared_ptr<rollout::RolloutBook> Read(const SkillRegistry&) override {
    return std::make_shared<rollout::RolloutBook>(rollout::MakeDirStore(dir_));
  }
  bool Leave(const rollout::RolloutSpec& spec, rollout::Command command) override {
    auto store = rollout::MakeDirStore(dir_);
    store->SaveCommand(spec.key.name, rollout::CommandJson(rollout::CommandName(command)));
    // A book that reads the rollout applies the command to the saved state too: status says it at once.
    rollout::RolloutBook(std::move(store)).Status(spec);
    return true;
  }

 private:
  std::string dir_;
};

// Redis, as serve's replicas share it: the state key each decides into, the command key they read.
class RedisSource final : public RolloutStateSource {
 public:
  explicit RedisSource(const Config& config) : shared_(StartSharedState(config, io_.get_executor())) {}
  ~RedisSource() override {
    if (shared_) shared_->Stop();
    io_.run_for(std::chrono::milliseconds(100));
  }

  std::shared_ptr<rollout::RolloutBook> Read(const SkillRegistry& registry) override {
    auto book = std::make_shared<rollout::RolloutBook>(nullptr);
    for (const auto& skill : registry.skills()) {
      if (!skill->rollout || !skill->candidate) continue;
      const rollout::RolloutKey& key = skill->rollout->key;
      auto state = Run({"GET", rollout::SharedRollouts::StateKey(*shared_, key)});
      auto counts = Run({"HGETALL", rollout::SharedRollouts::CountsKey(*shared_, key)});
      if (!state || !counts) return Unreachable(), nullptr;
      std::map<std::string, std::int64_t> sums;
      for (std::size_t i = 0; i + 1 < counts->elements.size(); i += 2) {
        sums[counts->elements[i].text] = std::strtoll(counts->elements[i + 1].text.c_str(), nullptr, 10);
      }
      book->Adopt(*skill->rollout, sums, state->text, "", false);
    }
    return book;
  }

  bool Leave(const rollout::RolloutSpec& spec, rollout::Command command) override {
    auto set = Run({"SET", rollout::SharedRollouts::CommandKey(*shared_, spec.key),
                    json::serialize(rollout::CommandJson(rollout::CommandName(command)))});
    if (!set) Unreachable();
    return set.has_value();
  }

 private:
  // One command, once Redis answers (a few seconds at most).
  std::optional<state::RedisReply> Run(std::vector<std::string> command) {
    for (int i = 0; i < 50 && !shared_->healthy(); ++i) io_.run_for(std::chrono::milliseconds(50));
    if (!shared_->healthy()) return std::nullopt;
    auto future = asio::co_spawn(io_, shared_->Run(std::move(command)), asio::use_future);
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io_.run_one();
    return future.get();
  }
  void Unreachable() const {
    std::fprintf(stderr, "skillrunner rollout: Redis (state.redis) does not answer: the rollouts' state is there\n");
  }

  asio::io_context io_;
  std::shared_ptr<state::SharedState> shared_;
};

}  // namespace

std::unique_ptr<RolloutStateSource> OpenRolloutState(const CommonOptions& common, const Config& config) {
  if (!config.state.redis.empty()) return std::make_unique<RedisSource>(config);
  return std::make_unique<DirSource>(StateDir(common, ProcessEnv));
}

}  // namespace skillrunner::cli
