#pragma once

// Time that moves only when every coroutine on the io_context is asleep: Run()
// polls the io_context, then jumps to the earliest wake-up and wakes those
// due, until nothing sleeps. For tests of many concurrent waiters (a limiter's
// queue) without real sleeping. Single-threaded: one io_context, run by Run().

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <vector>

#include "services/common/clock.h"

namespace skillrunner::test_support {

class VirtualClock : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay) override {
    co_return co_await SleepUntil(now_ + delay);
  }
  boost::asio::awaitable<bool> SleepUntil(TimePoint deadline) override {
    if (deadline <= now_) co_return true;
    auto sleeper = std::make_shared<Sleeper>(co_await boost::asio::this_coro::executor, deadline);
    sleepers_.push_back(sleeper);
    co_await sleeper->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    co_return true;
  }

  void Run(boost::asio::io_context& io) {
    for (;;) {
      io.restart();
      io.poll();
      if (sleepers_.empty()) return;
      auto earliest = std::min_element(sleepers_.begin(), sleepers_.end(),
                                       [](const auto& a, const auto& b) { return a->deadline < b->deadline; });
      now_ = std::max(now_, (*earliest)->deadline);
      std::erase_if(sleepers_, [&](const std::shared_ptr<Sleeper>& sleeper) {
        if (sleeper->deadline > now_) return false;
        sleeper->timer.cancel();
        return true;
      });
    }
  }

 private:
  struct Sleeper {
    Sleeper(boost::asio::any_io_executor executor, TimePoint at)
        : timer(executor, std::chrono::steady_clock::time_point::max()), deadline(at) {}
    boost::asio::steady_timer timer;
    TimePoint deadline;
  };
  std::vector<std::shared_ptr<Sleeper>> sleepers_;
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
};

}  // namespace skillrunner::test_support
