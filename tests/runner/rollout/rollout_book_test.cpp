// The rollout book (design.md §11.2): counts to decisions (rollback, steps, ready), operators'
// commands, and a state dir that a new process reads back.
#include "runner/rollout/rollout_book.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <fstream>

#include "tests/support/temp_tree.h"

namespace skillrunner::rollout {
namespace {
namespace json = boost::json;

RolloutSpec Spec(std::vector<double> steps = {}) {
  RolloutSpec spec;
  spec.candidate = "candidate.yaml";
  spec.traffic = steps.empty() ? 0.1 : steps.front();
  spec.steps = std::move(steps);
  spec.decide.measures = {Measure::kOk};
  spec.decide.min_samples = 50;
  spec.key = MakeRolloutKey("greet", 1, 2, "sha256:" + std::string(64, 'a'));
  return spec;
}

// `n` calls per arm, each arm failing every `stable_every`-th / `candidate_every`-th call (0: never).
void Feed(RolloutBook& book, const RolloutSpec& spec, int n, int stable_every, int candidate_every) {
  for (int i = 1; i <= n; ++i) {
    book.Count(spec, Arm::kStable, Measure::kOk, stable_every == 0 || i % stable_every != 0);
    book.Count(spec, Arm::kCandidate, Measure::kOk, candidate_every == 0 || i % candidate_every != 0);
  }
}

TEST(RolloutBookTest, AWorseCandidateIsRolledBackAndANewBookReadsTheRollbackBack) {
  testing::TempTree dir;
  const RolloutSpec spec = Spec();
  std::vector<RolloutEvent> events;
  {
    RolloutBook book(MakeDirStore(dir.root().string()));
    book.set_observer([&](const RolloutEvent& event) { events.push_back(event); });
    EXPECT_EQ(book.Traffic(spec), 0.1);
    Feed(book, spec, 29, 0, 2);  // half the candidate's calls fail, but fewer than 30 per arm
    EXPECT_EQ(book.Status(spec).state, State::kRunning);
    Feed(book, spec, 100, 0, 2);
    const RolloutStatus status = book.Status(spec);
    EXPECT_EQ(status.state, State::kRolledBack);
    EXPECT_EQ(book.Traffic(spec), 0);
    EXPECT_EQ(status.reason.substr(0, 29), "ok: the candidate is worse (-");
    EXPECT_GT(status.decided_at_ms, 0);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].from, State::kRunning);
  EXPECT_EQ(events[0].status.state, State::kRolledBack);
  RolloutBook again(MakeDirStore(dir.root().string()));
  EXPECT_EQ(again.Status(spec).state, State::kRolledBack);
  EXPECT_EQ(again.Traffic(spec), 0);
  // Another candidate (another digest) is another rollout.
  RolloutSpec edited = spec;
  edited.key = MakeRolloutKey("greet", 1, 2, "sha256:" + std::string(64, 'b'));
  EXPECT_EQ(again.Status(edited).state, State::kRunning);
  EXPECT_EQ(again.Traffic(edited), 0.1);
}

TEST(RolloutBookTest, ACandidateShownNotWorseStepsUpEachStepOnItsOwnSamplesThenIsReady) {
  RolloutBook book(nullptr);
  const RolloutSpec spec = Spec({0.1, 0.3});
  // Both perfect: the interval's lower bound rises above -0.02 only with enough calls.
  int fed = 0;
  while (book.Status(spec).step == 0 && fed < 5000) {
    Feed(book, spec, 10, 0, 0);
    fed += 10;
  }
  ASSERT_EQ(book.Status(spec).step, 1u) << fed;
  EXPECT_EQ(book.Traffic(spec), 0.3);
  EXPECT_EQ(book.Status(spec).state, State::kRunning);
  // The next step waits for min_samples more per arm, however strong the evidence already is.
  Feed(book, spec, 49, 0, 0);
  EXPECT_EQ(book.Status(spec).state, State::kRunning);
  Feed(book, spec, 1, 0, 0);
  EXPECT_EQ(book.Status(spec).state, State::kReady);
  EXPECT_EQ(book.Traffic(spec), 0.3);
}

TEST(RolloutBookTest, CommandsAreCheckedAgainstTheStateAndTheStoresCommandIsAppliedOnce) {
  testing::TempTree dir;
  const RolloutSpec spec = Spec();
  auto store = MakeDirStore(dir.root().string());
  RolloutStore& kept = *store;
  RolloutBook book(std::move(store));
  auto refused = book.Apply(spec, Command::kResume);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "cannot resume the rollout of \"greet\": it is running");
  ASSERT_TRUE(book.Apply(spec, Command::kPause));
  EXPECT_EQ(book.Status(spec).state, State::kPaused);
  EXPECT_EQ(book.Traffic(spec), 0.1);  // a pause keeps the traffic
  // Another process (the CLI) leaves a rollback in the store: applied at the next sync, once.
  kept.SaveCommand(spec.key.name, CommandJson("rollback"));
  book.Sync();
  EXPECT_EQ(book.Status(spec).state, State::kRolledBack);
  EXPECT_EQ(book.Status(spec).reason, "rolled back by an operator");
  book.Sync();
  EXPECT_EQ(book.Status(spec).state, State::kRolledBack);
  auto again = book.Apply(spec, Command::kRollback);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, "cannot roll back the rollout of \"greet\": it is rolled_back");
}

TEST(RolloutBookTest, ASavedStateThisBuildDidNotWriteStartsAnew) {
  const RolloutSpec spec = Spec();
  EXPECT_FALSE(
      StatusFromJson(json::parse(R"({"format":2,"state":"rolled_back","step":0,"traffic":0})").as_object(), spec));
  EXPECT_FALSE(StatusFromJson(json::parse(R"({"format":1,"state":"gone","step":0,"traffic":0})").as_object(), spec));
  auto status = StatusFromJson(
      json::parse(
          R"({"format":1,"state":"paused","step":0,"traffic":0.1,"tallies":[{"measure":"ok","stable":{"n":5,"successes":9},"candidate":{"n":3,"successes":3}}]})")
          .as_object(),
      spec);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, State::kPaused);
  EXPECT_EQ(status->tallies[0].stable.n, 0);  // more successes than calls: not read
}

}  // namespace
}  // namespace skillrunner::rollout
