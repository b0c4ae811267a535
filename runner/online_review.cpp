#include "runner/online_review.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <iterator>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "services/common/clock.h"

namespace skillrunner {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::chrono::hours kSpendWindow{1};

std::mutex judging_mutex;
std::shared_ptr<JudgingThread> judging_thread;  // JudgeOn's

std::function<void(const JudgedSample&)> sample_sink;  // RecordTo's, under judging_mutex

void Record(const JudgedSample& sample) {
  std::function<void(const JudgedSample&)> sink;
  {
    std::lock_guard lock(judging_mutex);
    sink = sample_sink;
  }
  if (sink) sink(sample);
}

std::shared_ptr<JudgingThread> CurrentJudgingThread() {
  std::lock_guard lock(judging_mutex);
  return judging_thread;
}

// This thread takes only CPU that nothing else wants: SCHED_IDLE, which any thread may choose,
// else the lowest nice value.
void LowerThisThreadsPriority() {
  sched_param param{};
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) != 0) {
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  }
}

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

struct JudgingThread::Impl {
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard{io.get_executor()};
  std::atomic<bool> stopping{false};
  std::thread thread;
};

JudgingThread::JudgingThread() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([io = &impl_->io] {
    LowerThisThreadsPriority();
    io->run();
  });
}

JudgingThread::~JudgingThread() { Join(); }

void JudgingThread::Join() {
  Stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

asio::any_io_executor JudgingThread::executor() const { return impl_->io.get_executor(); }

void JudgingThread::Stop() {
  if (impl_->stopping.exchange(true)) return;
  asio::post(impl_->io, [impl = impl_.get()] { impl->guard.reset(); });
}

bool JudgingThread::stopping() const { return impl_->stopping.load(); }

OnlineReviews::OnlineReviews(std::shared_ptr<rollout::RolloutBook> book)
    : book_(std::move(book)), judging_(CurrentJudgingThread()) {}

void OnlineReviews::RecordTo(std::function<void(const JudgedSample&)> sink) {
  std::lock_guard lock(judging_mutex);
  sample_sink = std::move(sink);
}

void OnlineReviews::JudgeOn(std::shared_ptr<JudgingThread> thread) {
  std::lock_guard lock(judging_mutex);
  judging_thread = std::move(thread);
}

void OnlineReviews::Offer(std::shared_ptr<Judging> judging, std::shared_ptr<const SkillRegistry> registry,
                          const Skill& stable, rollout::Arm arm, const json::value& input, const json::value& output,
                          asio::any_io_executor executor) {
  const rollout::OnlineReview& review = *stable.rollout->review;
  if (!stable.online_judge || !Drawn(review.sample)) return;
  if (judging_ && judging_->stopping()) return;
  {
    std::lock_guard lock(mutex_);
    Queue& queue = queues_[stable.id];
    if (static_cast<int>(queue.waiting.size()) >= review.queue) {
      ++queue.dropped["queue_full"];
      return;
    }
    queue.waiting.push_back(
        Sample{std::move(judging), std::move(registry), &stable, arm, input, output, RealClock().Now()});
    if (queue.running >= review.concurrency) return;
    ++queue.running;
  }
  asio::co_spawn(judging_ ? judging_->executor() : executor, Work(shared_from_this(), stable.id), asio::detached);
}

bool OnlineReviews::Next(const std::string& skill, Sample& out) {
  // Dropped samples go after the lock: the last of them may hold the last runner of a tree a
  // reload replaced.
  std::vector<Sample> gone;
  std::lock_guard lock(mutex_);
  Queue& queue = queues_[skill];
  if (judging_ && judging_->stopping()) {  // serve is ending: what is queued stays unjudged
    std::move(queue.waiting.begin(), queue.waiting.end(), std::back_inserter(gone));
    queue.waiting.clear();
  }
  while (!queue.waiting.empty()) {
    Sample sample = std::move(queue.waiting.front());
    queue.waiting.pop_front();
    const rollout::OnlineReview& review = *sample.stable->rollout->review;
    const auto now = RealClock().Now();
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
      queue.spent.emplace_back(RealClock().Now(), *metrics.cost_usd);
      queue.cost_usd += *metrics.cost_usd;
    }
    if (!verdict) {
      ++queue.dropped["judge_error"];
      return;
    }
    ++queue.judged;
  }
  const bool pass = !ReviewFailed(verdict->output);
  book_->Count(*sample.stable->rollout, sample.arm, rollout::Measure::kReviewPass, pass);
  Record(JudgedSample{*sample.stable, sample.arm, sample.input, sample.output, verdict->output, pass});
}

asio::awaitable<void> OnlineReviews::Work(std::shared_ptr<OnlineReviews> self, std::string skill) {
  Sample sample;
  while (self->Next(skill, sample)) {
    InvocationOutcome verdict =
        co_await sample.judging->Judge(*sample.stable->online_judge, sample.output, &sample.input, InvocationOptions{});
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

RolloutObserver::RolloutObserver(std::shared_ptr<rollout::RolloutBook> book)
    : book_(std::move(book)), reviews_(std::make_shared<OnlineReviews>(book_)) {}

void RolloutObserver::Seen(const InvocationSeen& seen) {
  if (seen.stable == nullptr) return;
  CountOutcome(*seen.stable, seen.route, seen.outcome, *book_);
  const bool judged_online = seen.route.counted && seen.stable->rollout && seen.stable->rollout->review;
  if (!judged_online || !seen.outcome || seen.outcome->review || !seen.judging) return;
  const rollout::Arm arm = seen.route.served.arm == "candidate" ? rollout::Arm::kCandidate : rollout::Arm::kStable;
  reviews_->Offer(seen.judging, seen.registry, *seen.stable, arm, seen.input, seen.outcome->output, seen.executor);
}

}  // namespace skillrunner
