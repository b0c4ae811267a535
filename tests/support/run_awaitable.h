#pragma once

// Drives one coroutine to completion on a fresh io_context, for tests:
//   Result<Foo> r = RunAwaitable(service.Run(...));
// Works for T = void too. Rethrows whatever the coroutine threw. Not for use inside a running
// io_context (it runs its own).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <utility>

namespace skillrunner::test_support {

template <class T>
T RunAwaitable(boost::asio::awaitable<T> awaitable) {
  boost::asio::io_context io;
  std::future<T> result = boost::asio::co_spawn(io, std::move(awaitable), boost::asio::use_future);
  io.run();
  return result.get();
}

}  // namespace skillrunner::test_support
