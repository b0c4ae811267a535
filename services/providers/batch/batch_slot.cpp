#include "services/providers/batch/batch_slot.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace skillrunner::providers {
namespace asio = boost::asio;

using ChannelBase =
    asio::experimental::concurrent_channel<void(boost::system::error_code, std::shared_ptr<BatchOutcome>)>;

struct Slot::Channel : ChannelBase {
  using ChannelBase::ChannelBase;
};

namespace {

ProviderError Cancelled() {
  ProviderError error;
  error.kind = ProviderError::Kind::kCancelled;
  error.message = "the wait for the batch was cancelled";
  return error;
}

}  // namespace

Slot::Slot(asio::any_io_executor executor) : channel_(std::make_shared<Channel>(std::move(executor), 1)) {}

Slot::~Slot() = default;

void Slot::Hold() {
  if (quorum == nullptr) return;
  std::lock_guard lock(wait_mutex_);
  if (held_ || answered_ || abandoned_) return;
  held_ = true;
  quorum->Waiting(case_key);
}

void Slot::Release() {
  std::lock_guard lock(wait_mutex_);
  ReleaseLocked();
}

void Slot::Abandon() {
  std::lock_guard lock(wait_mutex_);
  abandoned_ = true;
  ReleaseLocked();
}

void Slot::Deliver(BatchOutcome outcome) {
  {
    std::lock_guard lock(wait_mutex_);
    answered_ = true;
    ReleaseLocked();
  }
  channel_->try_send(boost::system::error_code{}, std::make_shared<BatchOutcome>(std::move(outcome)));
}

asio::awaitable<BatchOutcome> Slot::Answer() {
  auto [ec, outcome] = co_await channel_->async_receive(asio::as_tuple(asio::use_awaitable));
  if (ec || !outcome) co_return std::unexpected(Cancelled());
  co_return std::move(*outcome);
}

void Slot::ReleaseLocked() {
  if (!held_) return;
  held_ = false;
  quorum->Answered(case_key);
}

}  // namespace skillrunner::providers
