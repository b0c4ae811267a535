#pragma once

// Time that moves only when someone sleeps (or the test advances it); records
// every wait asked for. `cancel_at` makes that wait (0-based) come back
// cancelled, as a wait whose caller went away does.

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "services/common/clock.h"

namespace skillrunner::test_support {

class FakeClock : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay) override {
    sleeps.push_back(delay);
    if (cancel_at && *cancel_at + 1 == sleeps.size()) co_return false;
    now_ += delay;
    co_return true;
  }
  void Advance(std::chrono::milliseconds delay) { now_ += delay; }
  // The waits in whole milliseconds.
  std::vector<std::int64_t> DelaysMs() const {
    std::vector<std::int64_t> out;
    for (auto d : sleeps) out.push_back(d.count());
    return out;
  }

  std::vector<std::chrono::milliseconds> sleeps;
  std::optional<std::size_t> cancel_at;

 private:
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
};

}  // namespace skillrunner::test_support
