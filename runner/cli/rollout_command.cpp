#include "runner/cli/rollout_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "runner/cli/rollout_store.h"
#include "runner/rollout/rollout_book.h"
#include "runner/rollout_report.h"
#include "services/common/json_text.h"
#include "services/common/text.h"

namespace skillrunner::cli {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr int kUsageStatus = 2;
constexpr int kUnreachableStatus = 3;  // the store (Redis) does not answer

struct RolloutOptions {
  std::string skill;
  bool as_json = false;
  bool force = false;
};

int Refuse(const std::string& message) {
  std::fprintf(stderr, "skillrunner rollout: %s\n", message.c_str());
  return kUsageStatus;
}

// The tree's registry, or nullopt after printing why it cannot be used.
std::shared_ptr<const SkillRegistry> LoadTree(const CommonOptions& common) {
  auto config = ResolveConfig(common);
  if (!config) {
    for (const auto& d : config.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return nullptr;
  }
  auto loaded = LoadRegistry(common, std::move(*config));
  for (const auto& d : loaded.diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  }
  return loaded.registry;
}

// The skill `id` with its rollout, or the message saying why there is none.
std::expected<const Skill*, std::string> RolloutSkill(const SkillRegistry& registry, const std::string& id) {
  const Skill* skill = registry.FindSkill(id);
  if (skill == nullptr) {
    if (auto why = registry.FailedSkill(id)) return std::unexpected("skill \"" + id + "\" did not load: " + *why);
    return std::unexpected("unknown skill \"" + id + "\"" + DidYouMean(registry.SimilarSkillIds(id)));
  }
  if (!skill->rollout || !skill->candidate) {
    return std::unexpected("skill \"" + id + "\" has no rollout (a rollout: block in " + skill->file.string() + ")");
  }
  return skill;
}

std::string Percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g%%", share * 100);
  return text;
}

void PrintStatus(const json::array& rollouts) {
  if (rollouts.empty()) std::printf("no rollouts in this tree\n");
  for (const auto& item : rollouts) {
    const json::object& r = item.as_object();
    std::printf("%s: version %lld -> %lld, %s, traffic %s (step %lld)\n", r.at("skill").as_string().c_str(),
                static_cast<long long>(r.at("stable_version").as_int64()),
                static_cast<long long>(r.at("candidate_version").as_int64()), r.at("state").as_string().c_str(),
                Percent(r.at("traffic").to_number<double>()).c_str(),
                static_cast<long long>(r.at("step").to_number<std::int64_t>()));
    for (const auto& m : r.at("measures").as_array()) {
      const json::object& measure = m.as_object();
      auto arm = [&](const char* name) {
        const json::object& a = measure.at(name).as_object();
        return std::to_string(a.at("successes").as_int64()) + "/" + std::to_string(a.at("n").as_int64());
      };
      std::printf("  %-12s stable %s, candidate %s, difference %+.3f in [%+.3f, %+.3f] at alpha %.3g: %s\n",
                  measure.at("measure").as_string().c_str(), arm("stable").c_str(), arm("candidate").c_str(),
                  measure.at("estimate").to_number<double>(), measure.at("lower").to_number<double>(),
                  measure.at("upper").to_number<double>(), measure.at("alpha").to_number<double>(),
                  measure.at("decision").as_string().c_str());
    }
    if (!r.at("reason").as_string().empty()) {
      std::printf("  last decision: %s%s\n", r.at("reason").as_string().c_str(),
                  r.contains("decided_at") ? (" at " + std::string(r.at("decided_at").as_string())).c_str() : "");
    }
  }
}

int Status(const CommonOptions& common, const RolloutOptions& options) {
  auto registry = LoadTree(common);
  if (!registry) return kUsageStatus;
  if (!options.skill.empty()) {
    if (auto skill = RolloutSkill(*registry, options.skill); !skill) return Refuse(skill.error());
  }
  auto book = OpenRolloutState(common, registry->config())->Read(*registry);
  if (!book) return kUnreachableStatus;
  json::array rollouts = RolloutsReport(*registry, *book, options.skill);
  if (options.as_json) {
    std::printf("%s\n", CompactJson(json::object{{"rollouts", std::move(rollouts)}}).c_str());
  } else {
    PrintStatus(rollouts);
  }
  return 0;
}

// pause, resume, rollback: checked against the state kept, then left for serve.
int Steer(const CommonOptions& common, const RolloutOptions& options, rollout::Command command) {
  auto registry = LoadTree(common);
  if (!registry) return kUsageStatus;
  auto skill = RolloutSkill(*registry, options.skill);
  if (!skill) return Refuse(skill.error());
  const rollout::RolloutSpec& spec = *(*skill)->rollout;
  auto source = OpenRolloutState(common, registry->config());
  auto book = source->Read(*registry);
  if (!book) return kUnreachableStatus;
  if (auto refused = rollout::Refusal(spec, book->Status(spec).state, command)) return Refuse(refused->message);
  if (!source->Leave(spec, command)) return kUnreachableStatus;
  std::printf("%s: %s sent (serve applies it within a second)\n", options.skill.c_str(),
              std::string(rollout::CommandName(command)).c_str());
  return 0;
}

}  // namespace

int Promote(const CommonOptions& common, const std::string& id, bool force);  // rollout_promote.cpp

void AddRolloutCommands(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen) {
  auto* group = app.add_subcommand("rollout", "See and steer skills' canary rollouts (the state serve keeps)");
  group->require_subcommand(1);
  auto options = std::make_shared<RolloutOptions>();
  auto* status = group->add_subcommand("status", "Each rollout's arms, traffic, counts, statistics and decision");
  status->add_option("skill", options->skill, "Only this skill");
  status->add_flag("--json", options->as_json, "As JSON (the rollouts.list result)");
  status->callback([&chosen, &common, options] { chosen = [&common, options] { return Status(common, *options); }; });
  for (auto [name, command, help] :
       {std::tuple{"pause", rollout::Command::kPause, "Stop stepping up (a worse candidate is still rolled back)"},
        std::tuple{"resume", rollout::Command::kResume, "Go on from where a pause stopped"},
        std::tuple{"rollback", rollout::Command::kRollback, "Send every call to the stable version, for good"}}) {
    auto* sub = group->add_subcommand(name, help);
    sub->add_option("skill", options->skill, "The skill")->required();
    sub->callback([&chosen, &common, options, command] {
      chosen = [&common, options, command] { return Steer(common, *options, command); };
    });
  }
  auto* promote = group->add_subcommand(
      "promote", "Make a ready candidate the skill: candidate.yaml becomes skill.yaml; prints the diff to commit");
  promote->add_option("skill", options->skill, "The skill")->required();
  promote->add_flag("--force", options->force, "Promote a candidate that is not ready");
  promote->callback([&chosen, &common, options] {
    chosen = [&common, options] { return Promote(common, options->skill, options->force); };
  });
}

}  // namespace skillrunner::cli
