#include "services/common/batch_quorum.h"

namespace skillrunner {

void BatchQuorum::OnAllWaiting(Flush flush) {
  std::lock_guard lock(mutex_);
  flushes_.push_back(std::move(flush));
}

void BatchQuorum::SetRunning(std::size_t cases) {
  std::lock_guard lock(mutex_);
  running_ = cases;
}

void BatchQuorum::CaseFinished() {
  std::vector<Flush> due;
  {
    std::lock_guard lock(mutex_);
    if (running_ > 0) --running_;
    due = DueLocked();
  }
  Run(due);
}

void BatchQuorum::Waiting(const void* key) {
  std::lock_guard lock(mutex_);
  ++waiting_[key];
}

void BatchQuorum::Answered(const void* key) {
  std::lock_guard lock(mutex_);
  auto found = waiting_.find(key);
  if (found != waiting_.end() && --found->second <= 0) waiting_.erase(found);
}

void BatchQuorum::Check() {
  std::vector<Flush> due;
  {
    std::lock_guard lock(mutex_);
    due = DueLocked();
  }
  Run(due);
}

std::vector<BatchQuorum::Flush> BatchQuorum::DueLocked() const {
  if (running_ == 0 || waiting_.size() < running_) return {};
  return flushes_;
}

void BatchQuorum::Run(const std::vector<Flush>& flushes) {
  for (const Flush& flush : flushes) flush();
}

}  // namespace skillrunner
