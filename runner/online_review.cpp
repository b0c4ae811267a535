#include "runner/online_review.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <random>
#include <vector>

#include "runner/skill_runner.h"

namespace skillrunner {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::chrono::hours kSpendWindow{1};

bool Drawn(double share) {
  if (share >= 1) return true;
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0, 1)(engine) < share;
}

double Spent(std::deque<std::pair<std::chrono::steady_clock::time_point, double>>& spent,
             std::chrono::steady_clock::time_point now) {
  while (!spent.empty() && now - spent.front().first > kSpendWindow) spent.pop_front();
  double sum = 0;
  for (const auto& [at, usd] : spent) sum += usd;
  return sum;
}

}  // namespace

void OnlineReviews::Offer(std::shared_ptr<SkillRunner> runner, std::shared_ptr<const SkillRegistry> registry,
                          const Skill& stable, rollout::Arm arm, const json::value& input, const json::value& output,
                          asio::any_io_executor executor) {
  const rollout::OnlineReview& review = *stable.rollout->review;
  if (!stable.online_judge || !Drawn(review.sample)) return;
  {
    std::lock_guard lock(mutex_);
    Queue& queue = queues_[stable.id];
    if (static_cast<int>(queue.waiting.size()) >= review.queue) {
      ++queue.dropped["queue_full"];
      return;
    }
    queue.waiting.push_back(
        Sample{std::move(runner), std::move(registry), &stable, arm, input, output, std::chrono::steady_clock::now()});
    if (queue.running >= review.concurrency) return;
    ++queue.running;
  }
  asio::co_spawn(executor, Work(shared_from_this(), stable.id), asio::detached);
}

bool OnlineReviews::Next(const std::string& skill, Sample& out) {
  // Dropped samples go after the lock: the last of them may hold the last runner of a tree a
  // reload replaced.
  std::vector<Sample> gone;
  std::lock_guard lock(mutex_);
  Queue& queue = queues_[skill];
  while (!queue.waiting.empty()) {
    Sample sample = std::move(queue.waiting.front());
    queue.waiting.pop_front();
    const rollout::OnlineReview& review = *sample.stable->rollout->review;
    const auto now = std::chrono::steady_clock::now();
    if (now - sample.queued > review.max_wait) {
      ++queue.dropped["expired"];
    } else if (review.max_cost_usd_per_hour && Spent(queue.spent, now) >= *review.max_cost_usd_per_hour) {
      ++queue.dropped["spend_cap"];
    } else {
      out = std::move(sample);
      return true;
    }
    gone.push_back(std::move(sample));
  }
  --queue.running;
  return false;
}

void OnlineReviews::Judged(const std::string& skill, const Sample& sample, const InvocationOutcome& verdict) {
  {
    std::lock_guard lock(mutex_);
    Queue& queue = queues_[skill];
    const auto& metrics = verdict ? verdict->metrics : verdict.error().metrics;
    if (metrics.cost_usd) {
      queue.spent.emplace_back(std::chrono::steady_clock::now(), *metrics.cost_usd);
      queue.cost_usd += *metrics.cost_usd;
    }
    if (!verdict) {
      ++queue.dropped["judge_error"];
      return;
    }
    ++queue.judged;
  }
  book_->Count(*sample.stable->rollout, sample.arm, rollout::Measure::kReviewPass, !ReviewFailed(verdict->output));
}

asio::awaitable<void> OnlineReviews::Work(std::shared_ptr<OnlineReviews> self, std::string skill) {
  Sample sample;
  while (self->Next(skill, sample)) {
    InvocationOutcome verdict =
        co_await sample.runner->Judge(*sample.stable->online_judge, sample.output, &sample.input, InvocationOptions{});
    self->Judged(skill, sample, verdict);
    sample = Sample{};  // the runner and registry it kept go now
  }
}

std::map<std::string, std::map<std::string, std::int64_t>> OnlineReviews::Dropped() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::map<std::string, std::int64_t>> out;
  for (const auto& [skill, queue] : queues_) out[skill] = queue.dropped;
  return out;
}

std::map<std::string, std::int64_t> OnlineReviews::Judged() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::int64_t> out;
  for (const auto& [skill, queue] : queues_) out[skill] = queue.judged;
  return out;
}

std::map<std::string, double> OnlineReviews::JudgeCostUsd() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, double> out;
  for (const auto& [skill, queue] : queues_) out[skill] = queue.cost_usd;
  return out;
}

}  // namespace skillrunner
