#pragma once

#include <memory>

#include "services/common/clock.h"
#include "services/providers/provider.h"
#include "services/state/limiter.h"

namespace skillrunner::providers {

// A provider behind its RequestLimiter (design.md §9.6): each request waits for
// its slot (within the request's timeout) and tells the limiter whether it
// met a rate limit, so the pace is learned without any configuration. A slot
// past the request's timeout is an overloaded error (with when a slot is
// free), sent nowhere.
class LimitedProvider final : public Provider {
 public:
  LimitedProvider(std::shared_ptr<Provider> inner, std::shared_ptr<state::Limiter> limiter, Clock& clock);

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  const state::Limiter& limiter() const { return *limiter_; }

 private:
  std::shared_ptr<Provider> inner_;
  std::shared_ptr<state::Limiter> limiter_;
  Clock& clock_;
};

}  // namespace skillrunner::providers
