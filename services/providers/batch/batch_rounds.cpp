#include "services/providers/batch/batch_rounds.h"

#include <algorithm>
#include <string>
#include <utility>

namespace skillrunner::providers {

BatchRounds::Added BatchRounds::Add(SlotPtr slot) {
  Added added;
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(slot));
  if (pending_.size() >= limit_) {
    added.full.swap(pending_);
    ++generation_;
  } else if (pending_.size() == 1) {
    added.start_timer = generation_;
  }
  return added;
}

std::vector<SlotPtr> BatchRounds::TakeAll() {
  std::vector<SlotPtr> due;
  std::lock_guard lock(mutex_);
  if (pending_.empty()) return due;
  due.swap(pending_);
  ++generation_;
  return due;
}

std::vector<SlotPtr> BatchRounds::TakeIfStill(int generation) {
  std::lock_guard lock(mutex_);
  if (generation_ != generation) return {};
  std::vector<SlotPtr> due;
  due.swap(pending_);
  if (!due.empty()) ++generation_;
  return due;
}

namespace {

std::vector<std::vector<SlotPtr>> SplitBySize(std::vector<SlotPtr> slots, const BatchApi& api) {
  const std::size_t limit = api.MaxBytes();
  if (limit == 0) return {std::move(slots)};
  std::vector<std::vector<SlotPtr>> parts(1);
  std::size_t bytes = 0;
  for (SlotPtr& slot : slots) {
    const std::size_t size = api.RequestBytes(slot->request);
    if (!parts.back().empty() && bytes + size > limit) {
      parts.emplace_back();
      bytes = 0;
    }
    bytes += size;
    parts.back().push_back(std::move(slot));
  }
  return parts;
}

}  // namespace

std::vector<std::vector<SlotPtr>> BatchRounds::Parts(std::vector<SlotPtr> slots, const BatchApi& api) {
  std::vector<std::pair<std::string, std::vector<SlotPtr>>> groups;
  for (SlotPtr& slot : slots) {
    std::string group = api.GroupOf(slot->request);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == group; });
    if (it == groups.end()) it = groups.insert(groups.end(), {std::move(group), {}});
    it->second.push_back(std::move(slot));
  }
  std::vector<std::vector<SlotPtr>> parts;
  for (auto& [group, members] : groups) {
    for (auto& part : SplitBySize(std::move(members), api)) parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace skillrunner::providers
