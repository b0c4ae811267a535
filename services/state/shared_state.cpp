#include "services/state/shared_state.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace skillrunner::state {

SharedState::SharedState(boost::asio::any_io_executor executor, SharedStateOptions options, Clock& clock)
    : executor_(executor),
      options_(std::move(options)),
      clock_(clock),
      connection_(RedisConnection::Create(executor, options_.url)) {}

std::shared_ptr<SharedState> SharedState::Start(boost::asio::any_io_executor executor, SharedStateOptions options,
                                                Clock& clock) {
  std::shared_ptr<SharedState> state(new SharedState(executor, std::move(options), clock));
  boost::asio::co_spawn(executor, state->Probe(), boost::asio::detached);
  return state;
}

SharedState::~SharedState() { stopped_ = true; }

void SharedState::Stop() {
  stopped_ = true;
  connection_->Close();
}

std::string SharedState::Key(std::string_view kind, std::string_view name) const {
  std::string key = options_.key_namespace;
  key += ':';
  key += kind;
  key += ':';
  key += name;
  return key;
}

void SharedState::Degrade(const std::string& why) {
  if (healthy_.exchange(false)) {
    ++degradations_;
    spdlog::warn(
        "state: {} is unreachable or slow ({}); each limit falls back to this process's share "
        "(1/{}) until it answers again",
        options_.url.Display(), why, options_.replicas_hint);
  }
}

// Connects, and each probe_interval checks that Redis still answers in time:
// the one place that makes the state healthy again. Holds only a weak
// reference between probes, so the state can go away.
boost::asio::awaitable<void> SharedState::Probe() {
  std::weak_ptr<SharedState> weak = weak_from_this();
  bool first = true;
  for (;;) {
    {
      auto self = weak.lock();
      if (!self || stopped_) co_return;
      std::optional<std::string> problem;
      if (!connection_->connected()) {
        auto connected = co_await connection_->Connect(std::max(options_.timeout, std::chrono::milliseconds(1000)));
        if (!connected) problem = connected.error().message;
      }
      if (!problem) {
        std::vector<std::string> ping{"PING"};
        auto pong = co_await connection_->Command(std::move(ping), options_.timeout);
        if (!pong) problem = pong.error().message;
      }
      if (problem) {
        if (first) {
          spdlog::warn(
              "state: cannot reach {} ({}); each limit falls back to this process's share (1/{}) "
              "until it answers",
              options_.url.Display(), *problem, options_.replicas_hint);
        }
        Degrade(*problem);
      } else if (!healthy_.exchange(true)) {
        spdlog::info("state: sharing limits, quotas and session memory through {}", options_.url.Display());
      }
      first = false;
      settled_ = true;
    }
    if (!co_await clock_.Sleep(options_.probe_interval)) co_return;
  }
}

boost::asio::awaitable<std::optional<RedisReply>> SharedState::Run(std::vector<std::string> command) {
  for (int waited = 0; !settled_ && waited < 400; ++waited) {
    if (!co_await clock_.Sleep(std::chrono::milliseconds(5))) co_return std::nullopt;
  }
  if (!healthy_) co_return std::nullopt;
  auto self = shared_from_this();
  auto answer = co_await connection_->Command(std::move(command), options_.timeout);
  if (!answer) {
    if (answer.error().message.starts_with("redis answered: ")) {
      spdlog::error("state: {}", answer.error().message);
    } else {
      Degrade(answer.error().message);
    }
    co_return std::nullopt;
  }
  co_return std::move(*answer);
}

boost::asio::awaitable<std::optional<RedisReply>> SharedState::Eval(std::string_view script,
                                                                    std::vector<std::string> keys,
                                                                    std::vector<std::string> args) {
  std::vector<std::string> command{"EVAL", std::string(script), std::to_string(keys.size())};
  for (auto& key : keys) command.push_back(std::move(key));
  for (auto& arg : args) command.push_back(std::move(arg));
  co_return co_await Run(std::move(command));
}

}  // namespace skillrunner::state
