#pragma once

#include <expected>
#include <memory>
#include <utility>

namespace skillrunner {

// A std::expected<T, E> on the heap, for what a coroutine returns while large
// values are in flight: Boost.Asio's awaitable keeps room for its return value
// in the coroutine's frame from the call on, and each caller keeps room for
// what it awaits, so an answer that passes up through four coroutines would
// be reserved, empty, four times for as long as the request waits. Boxed,
// each of them holds a pointer.
//
// It reads like the expected it holds (has_value, *, ->, error) and unboxes
// into one when moved (`std::expected<T, E> e = co_await Chat(...)`). A
// default-made or moved-from BoxedExpected is empty: only assigning to it is
// allowed.
template <typename T, typename E>
class BoxedExpected {
 public:
  using Value = std::expected<T, E>;

  BoxedExpected() = default;  // empty, as when moved from (co_spawn's completion wants one)
  BoxedExpected(Value value) : box_(std::make_unique<Value>(std::move(value))) {}
  BoxedExpected(T value) : box_(std::make_unique<Value>(std::in_place, std::move(value))) {}
  BoxedExpected(std::unexpected<E> error) : box_(std::make_unique<Value>(std::move(error))) {}

  bool has_value() const { return box_->has_value(); }
  explicit operator bool() const { return box_->has_value(); }

  T& operator*() & { return **box_; }
  const T& operator*() const& { return **box_; }
  T&& operator*() && { return std::move(**box_); }
  T* operator->() { return &**box_; }
  const T* operator->() const { return &**box_; }
  T& value() & { return box_->value(); }
  const T& value() const& { return box_->value(); }
  T&& value() && { return std::move(box_->value()); }

  E& error() & { return box_->error(); }
  const E& error() const& { return box_->error(); }
  E&& error() && { return std::move(box_->error()); }

  // The expected itself, unboxed.
  operator Value() && { return std::move(*box_); }

 private:
  std::unique_ptr<Value> box_;
};

}  // namespace skillrunner
