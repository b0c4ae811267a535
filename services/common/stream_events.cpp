#include "services/common/stream_events.h"

#include <boost/json/array.hpp>
#include <mutex>
#include <optional>

namespace skillrunner {
namespace json = boost::json;

// What the events and the timer's callback share (the callback may outlive
// the StreamEvents).
struct StreamEvents::Pacing {
  std::mutex mutex;
  Emit emit;
  std::chrono::milliseconds interval{0};
  const Clock* clock = nullptr;
  Timer timer;
  std::optional<json::object> held;  // the newest partial not yet sent
  std::optional<Clock::TimePoint> last_sent;
  bool timer_armed = false;

  void SendHeldLocked() {
    if (!held) return;
    emit("skills.partial", std::move(*held));
    held.reset();
    last_sent = clock->Now();
  }

  // Under the lock: whether to start the timer that sends the held partial
  // when its interval is up, and after how long. The caller starts it with
  // Arm after unlocking (a timer may call back at once).
  std::optional<std::chrono::milliseconds> DueLocked(Clock::TimePoint now) {
    if (timer_armed || !held) return std::nullopt;
    timer_armed = true;
    const auto due = *last_sent + interval;
    return std::chrono::ceil<std::chrono::milliseconds>(due > now ? due - now : Clock::TimePoint::duration::zero());
  }

  static void Arm(const std::shared_ptr<Pacing>& self, std::chrono::milliseconds delay) {
    self->timer(delay, [self] {
      std::optional<std::chrono::milliseconds> again;
      {
        std::lock_guard fired(self->mutex);
        self->timer_armed = false;
        const Clock::TimePoint at = self->clock->Now();
        if (self->held && at - *self->last_sent >= self->interval) {
          self->SendHeldLocked();
        } else {
          again = self->DueLocked(at);  // a flush sent one since: wait out its interval
        }
      }
      if (again) Arm(self, *again);
    });
  }
};

StreamEvents::StreamEvents(Emit emit) : pacing_(std::make_shared<Pacing>()) { pacing_->emit = std::move(emit); }

StreamEvents::StreamEvents(Emit emit, std::chrono::milliseconds interval, const Clock& clock, Timer timer)
    : StreamEvents(std::move(emit)) {
  pacing_->interval = interval;
  pacing_->clock = &clock;
  pacing_->timer = std::move(timer);
}

void StreamEvents::Partial(int attempt, const json::value& value, const std::vector<std::string>& complete) {
  shown_attempt_ = attempt;
  json::array pointers;
  pointers.reserve(complete.size());
  for (const std::string& pointer : complete) pointers.emplace_back(pointer);
  json::object params{{"attempt", attempt}, {"value", value}, {"complete", std::move(pointers)}};
  Pacing& p = *pacing_;
  std::unique_lock lock(p.mutex);
  if (p.interval.count() == 0 || p.clock == nullptr || !p.timer) {
    p.emit("skills.partial", std::move(params));
    return;
  }
  const Clock::TimePoint now = p.clock->Now();
  if (!p.held && (!p.last_sent || now - *p.last_sent >= p.interval)) {
    p.emit("skills.partial", std::move(params));
    p.last_sent = now;
    return;
  }
  p.held = std::move(params);
  std::optional<std::chrono::milliseconds> delay = p.DueLocked(now);
  lock.unlock();
  if (delay) Pacing::Arm(pacing_, *delay);
}

void StreamEvents::Flush() {
  std::lock_guard lock(pacing_->mutex);
  pacing_->SendHeldLocked();
}

void StreamEvents::Reset(int attempt, std::string_view reason, const std::vector<FieldError>& errors) {
  Flush();
  shown_attempt_ = 0;
  json::array list;
  for (const FieldError& error : errors) list.push_back(json::object{{"path", error.path}, {"message", error.message}});
  std::lock_guard lock(pacing_->mutex);
  pacing_->emit("skills.reset", json::object{{"attempt", attempt}, {"reason", reason}, {"errors", std::move(list)}});
}

}  // namespace skillrunner
