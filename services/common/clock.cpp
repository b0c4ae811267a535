#include "services/common/clock.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace skillrunner {

Clock::TimePoint SteadyClock::Now() const { return std::chrono::steady_clock::now(); }

boost::asio::awaitable<bool> SteadyClock::Sleep(std::chrono::milliseconds delay) {
  co_return co_await SleepUntil(Now() + delay);
}

boost::asio::awaitable<bool> Clock::SleepUntil(TimePoint deadline) {
  co_return co_await Sleep(std::chrono::ceil<std::chrono::milliseconds>(deadline - Now()));
}

boost::asio::awaitable<bool> SteadyClock::SleepUntil(TimePoint deadline) {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, deadline);
  auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  co_return !ec;
}

std::chrono::system_clock::time_point Clock::WallNow() const { return std::chrono::system_clock::now(); }

std::int64_t Clock::UnixNanos(TimePoint t) const {
  const auto wall = WallNow() - std::chrono::duration_cast<std::chrono::system_clock::duration>(Now() - t);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count();
}

Clock& RealClock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace skillrunner
