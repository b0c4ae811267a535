#include "services/common/batch_quorum.h"

#include <gtest/gtest.h>

namespace skillrunner {
namespace {

struct Counted {
  BatchQuorum quorum;
  int flushes = 0;
  Counted() {
    quorum.OnAllWaiting([this] { ++flushes; });
  }
  // A request of `key` gathered, as a provider says it.
  void Wait(const void* key) {
    quorum.Waiting(key);
    quorum.Check();
  }
};

// Three cases: the round is sent when the third waits, not before.
TEST(BatchQuorumTest, FlushesWhenTheLastRunningCaseWaits) {
  Counted c;
  c.quorum.SetRunning(3);
  int a = 0, b = 0, d = 0;
  c.Wait(&a);
  c.Wait(&b);
  EXPECT_EQ(c.flushes, 0);
  c.Wait(&d);
  EXPECT_EQ(c.flushes, 1);
}

// A case with two requests waiting counts once: two of three cases waiting
// with three requests is not everyone.
TEST(BatchQuorumTest, ACaseCountsOnceHoweverManyOfItsRequestsWait) {
  Counted c;
  c.quorum.SetRunning(3);
  int a = 0, b = 0, d = 0;
  c.Wait(&a);
  c.Wait(&a);
  c.Wait(&b);
  EXPECT_EQ(c.flushes, 0);
  c.quorum.Answered(&a);  // one of a's two came back: a still waits
  c.Wait(&d);
  EXPECT_EQ(c.flushes, 1);
}

// A case answered and back at work is not waiting; the others' round goes
// when it finishes without asking for more.
TEST(BatchQuorumTest, ACaseThatFinishesLeavesTheOthersWaitingAndFlushes) {
  Counted c;
  c.quorum.SetRunning(2);
  int a = 0, b = 0;
  c.Wait(&a);
  c.Wait(&b);
  EXPECT_EQ(c.flushes, 1);
  c.quorum.Answered(&b);
  c.quorum.Check();  // a resubmission while b works: b is not waiting
  EXPECT_EQ(c.flushes, 1);
  c.quorum.CaseFinished();
  EXPECT_EQ(c.flushes, 2);
}

// Nothing running: nothing to send for (the last case out flushes nothing).
TEST(BatchQuorumTest, NoRunningCaseFlushesNothing) {
  Counted c;
  c.quorum.SetRunning(1);
  int a = 0;
  c.quorum.CaseFinished();
  c.Wait(&a);
  c.quorum.Check();
  EXPECT_EQ(c.flushes, 0);
}

// Every provider of the run gathers its own round; each is sent.
TEST(BatchQuorumTest, EveryProvidersFlushIsCalled) {
  BatchQuorum quorum;
  int first = 0, second = 0;
  quorum.OnAllWaiting([&] { ++first; });
  quorum.OnAllWaiting([&] { ++second; });
  quorum.SetRunning(1);
  int a = 0;
  quorum.Waiting(&a);
  quorum.Check();
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
}

}  // namespace
}  // namespace skillrunner
