// StreamEvents coalescing partials: at most one per interval by the clock,
// the newest held back until the timer fires, and the held one always sent
// before a reset or the answer (Flush).
#include "services/common/stream_events.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/fake_clock.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

class StreamEventsTest : public ::testing::Test {
 protected:
  // "partial:<value>" or "reset:<attempt>" for each event sent.
  StreamEvents Make(std::chrono::milliseconds interval) {
    return StreamEvents(
        [this](std::string_view method, json::object params) {
          sent_.push_back(method == "skills.partial" ? "partial:" + json::serialize(params.at("value"))
                                                     : "reset:" + json::serialize(params.at("attempt")));
        },
        interval, clock_,
        [this](std::chrono::milliseconds delay, std::function<void()> fire) {
          delays_.push_back(delay.count());
          timers_.push_back(std::move(fire));
        });
  }
  void Fire() {
    auto timers = std::move(timers_);
    timers_.clear();
    for (auto& fire : timers) fire();
  }

  test_support::FakeClock clock_;
  std::vector<std::string> sent_;
  std::vector<std::int64_t> delays_;
  std::vector<std::function<void()>> timers_;
};

TEST_F(StreamEventsTest, AtMostOnePartialPerIntervalTheNewestSentByTheTimer) {
  StreamEvents events = Make(25ms);
  events.Partial(1, 1, {});
  clock_.Advance(5ms);
  events.Partial(1, 2, {});
  clock_.Advance(5ms);
  events.Partial(1, 3, {});
  EXPECT_EQ(sent_, std::vector<std::string>{"partial:1"});
  EXPECT_EQ(delays_, std::vector<std::int64_t>{20});  // one timer, due 25 ms after the first
  clock_.Advance(15ms);
  Fire();
  EXPECT_EQ(sent_, (std::vector<std::string>{"partial:1", "partial:3"}));
  // A partial a whole interval later goes at once.
  clock_.Advance(30ms);
  events.Partial(1, 4, {});
  EXPECT_EQ(sent_.back(), "partial:4");
  EXPECT_EQ(delays_.size(), 1u);
  EXPECT_EQ(events.shown_attempt(), 1);
}

TEST_F(StreamEventsTest, TheHeldPartialGoesBeforeAResetAndOnFlushAndALateTimerSendsNothingTwice) {
  StreamEvents events = Make(25ms);
  events.Partial(1, 1, {});
  events.Partial(1, 2, {});
  events.Reset(1, "validation", {{"/a", "bad"}});
  EXPECT_EQ(sent_, (std::vector<std::string>{"partial:1", "partial:2", "reset:1"}));
  EXPECT_EQ(events.shown_attempt(), 0);
  Fire();  // the timer armed for partial 2 finds nothing held
  EXPECT_EQ(sent_.size(), 3u);
  clock_.Advance(1ms);
  events.Partial(2, 10, {});  // held: the last one went 1 ms ago
  events.Flush();
  EXPECT_EQ(sent_.back(), "partial:10");
  events.Flush();
  EXPECT_EQ(sent_.size(), 4u);
}

TEST_F(StreamEventsTest, IntervalZeroSendsEveryPartial) {
  StreamEvents events = Make(0ms);
  for (int i = 0; i < 5; ++i) events.Partial(1, i, {});
  EXPECT_EQ(sent_.size(), 5u);
  EXPECT_TRUE(delays_.empty());
}

}  // namespace
}  // namespace skillrunner
