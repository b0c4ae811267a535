#include "services/common/stream_timer.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace skillrunner {
namespace asio = boost::asio;

namespace {

asio::awaitable<void> FireAfter(Clock* clock, std::chrono::milliseconds delay, std::function<void()> fire) {
  const bool waited = co_await clock->Sleep(delay);
  if (waited) fire();
}

}  // namespace

StreamEvents::Timer MakeClockTimer(Clock& clock, asio::any_io_executor executor) {
  // The clock by pointer: a lambda's reference capture of a reference parameter would outlive it.
  return [clock = &clock, executor](std::chrono::milliseconds delay, std::function<void()> fire) {
    asio::co_spawn(executor, FireAfter(clock, delay, std::move(fire)), asio::detached);
  };
}

}  // namespace skillrunner
