#include "runner/cli/rollout_history.h"

#include <cstdio>

#include "services/common/clock.h"
#include "services/common/iso_time.h"

namespace skillrunner::cli {
namespace json = boost::json;

namespace {

std::string Now() { return IsoUtc(RealClock().WallNow()); }

const rollout::RolloutSpec* SpecOf(const SkillRegistry& registry, const rollout::RolloutKey& key) {
  const Skill* skill = registry.FindSkill(key.skill);
  if (skill == nullptr || !skill->rollout || skill->rollout->key.name != key.name) return nullptr;
  return &*skill->rollout;
}

}  // namespace

std::shared_ptr<RolloutRecorder> RolloutRecorder::Start(const std::string& location, std::string replica) {
  if (location.empty()) return nullptr;
  auto log = eval::RolloutLog::Open(location);
  if (!log) {
    std::fprintf(stderr, "skillrunner serve: rollouts are not recorded in the history: %s\n",
                 log.error().message.c_str());
    return nullptr;
  }
  return std::shared_ptr<RolloutRecorder>(new RolloutRecorder(std::move(*log), std::move(replica)));
}

eval::RolloutPoint RolloutRecorder::Point(const rollout::RolloutKey& key, const rollout::RolloutStatus& status,
                                          const rollout::RolloutSpec* spec, std::string kind) const {
  eval::RolloutPoint point;
  point.rollout = key.name;
  point.skill = key.skill;
  point.stable_version = key.stable_version;
  point.candidate_version = key.candidate_version;
  point.at = Now();
  point.kind = std::move(kind);
  point.replica = replica_;
  point.state = std::string(rollout::StateName(status.state));
  point.traffic = status.traffic;
  point.reason = status.reason;
  if (spec != nullptr) {
    point.alpha = spec->decide.alpha;
    point.tau = spec->decide.tau;
  }
  point.status = rollout::ToJson(status);
  return point;
}

void RolloutRecorder::Decision(const rollout::RolloutEvent& event, const SkillRegistry& registry) {
  log_->Add(Point(event.key, event.status, SpecOf(registry, event.key), "decision"));
}

void RolloutRecorder::Snapshot(const SkillRegistry& registry, rollout::RolloutBook& book, bool force) {
  const auto now = RealClock().Now();
  if (!force && now - last_snapshot_ < kSnapshotEvery) return;
  last_snapshot_ = now;
  for (const auto& skill : registry.skills()) {
    if (!skill->rollout) continue;
    log_->Add(Point(skill->rollout->key, book.Status(*skill->rollout), &*skill->rollout, "snapshot"));
  }
}

void RolloutRecorder::Sample(const JudgedSample& sample) {
  const rollout::RolloutSpec& spec = *sample.stable.rollout;
  eval::RolloutSample out;
  out.rollout = spec.key.name;
  out.skill = spec.key.skill;
  out.arm = std::string(rollout::ArmName(sample.arm));
  out.version = sample.arm == rollout::Arm::kStable ? spec.key.stable_version : spec.key.candidate_version;
  out.at = Now();
  out.replica = replica_;
  out.pass = sample.pass;
  out.sample = json::object{{"input", sample.input}, {"output", sample.output}, {"review", sample.review}};
  log_->Add(std::move(out));
}

}  // namespace skillrunner::cli
