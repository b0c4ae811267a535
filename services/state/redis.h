#pragma once

// One asynchronous Redis connection (hiredis, Debian libhiredis-dev) driven
// by the io threads without blocking them: hiredis reads and writes when an
// Asio wait on its socket says it can, all on one strand; a command's
// awaiting coroutine resumes on its own executor. Used by SharedState.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::state {

struct RedisReply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  std::int64_t integer = 0;
  std::string text;  // string, status and error replies
  std::vector<RedisReply> elements;
};

// redis://[:password@]host[:port][/db]
struct RedisUrl {
  std::string host;
  std::uint16_t port = 6379;
  std::string password;  // never logged: Display() leaves it out
  int db = 0;
  std::string Display() const;  // redis://host:port/db
};
// CONFIG_INVALID naming what is wrong with the URL (never the password).
Result<RedisUrl> ParseRedisUrl(std::string_view url);

class RedisConnection : public std::enable_shared_from_this<RedisConnection> {
 public:
  // Failures are INTERNAL: the shared state cannot be reached or refused.
  using Answer = Result<RedisReply>;

  static std::shared_ptr<RedisConnection> Create(boost::asio::any_io_executor executor, RedisUrl url);
  ~RedisConnection();

  // (Re)connects: resolves the host, connects, AUTH and SELECT as the URL
  // says, all within `timeout`. Drops any connection there was first.
  boost::asio::awaitable<Result<void>> Connect(std::chrono::milliseconds timeout);
  // One command. An error when not connected, when the connection drops,
  // when Redis answers with an error, or when no answer came within `timeout`.
  boost::asio::awaitable<Answer> Command(std::vector<std::string> args, std::chrono::milliseconds timeout);
  bool connected() const;
  // Drops the connection (commands pending answer "lost"); nothing of it keeps the executor busy
  // afterwards. A later Connect connects again.
  void Close();

 private:
  struct Impl;
  RedisConnection(boost::asio::any_io_executor executor, RedisUrl url);
  std::shared_ptr<Impl> impl_;
};

}  // namespace skillrunner::state
