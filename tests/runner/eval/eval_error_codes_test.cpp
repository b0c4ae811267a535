// The codes of the eval runner's failures (design.md §9.9): a flag or argument
// that cannot work is CONFIG_INVALID; a file, lock or database that fails is
// INTERNAL. Every one of them exits 2 from `skillrunner eval`.
#include <gtest/gtest.h>

#include "runner/eval/dir_lock.h"
#include "runner/eval/history/response_cache.h"
#include "runner/eval/history/stored_runs.h"
#include "runner/eval/records/results_log.h"
#include "runner/eval/records/run_meta.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {

using testing::TempTree;

TEST(EvalErrorCodesTest, BadFlagTextIsConfigInvalid) {
  auto ttl = ParseTtl("7w");
  ASSERT_FALSE(ttl);
  EXPECT_EQ(ttl.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(ttl.error().message, "unknown unit \"w\" (expected s, m, h or d)");
  EXPECT_EQ(ParseTtl("-1d").error().code, ErrorCode::kConfigInvalid);
}

TEST(EvalErrorCodesTest, ARunArgumentThatNamesNoRunIsConfigInvalid) {
  TempTree tree;
  const auto history = tree.Path("eval-history.sqlite");
  auto run = LoadStoredRun("no-such-run", history);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(run.error().message, "\"no-such-run\" is neither a run folder nor a run in " + history.string());
}

TEST(EvalErrorCodesTest, FilesAndLocksThatFailAreInternal) {
  TempTree tree;
  auto meta = ReadRunMeta(tree.Path("run.json"));
  ASSERT_FALSE(meta);
  EXPECT_EQ(meta.error().code, ErrorCode::kInternal);
  EXPECT_EQ(meta.error().message, "cannot read " + tree.Path("run.json").string());
  tree.Write("run.json", "{}");
  EXPECT_EQ(ReadRunMeta(tree.Path("run.json")).error().code, ErrorCode::kInternal);
  auto writer = ResultsWriter::Open(tree.Path("no-such-folder/results.jsonl"));
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error().code, ErrorCode::kInternal);
  auto held = DirLock::Acquire(tree.root());
  ASSERT_TRUE(held) << held.error().message;
  // flock(2) locks belong to the open file: a second open is a second owner.
  auto again = DirLock::Acquire(tree.root());
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kInternal);
  EXPECT_EQ(again.error().message,
            "another eval is writing " + tree.root().string() + " (it holds " + (tree.root() / ".lock").string() + ")");
}

TEST(EvalErrorCodesTest, AResponseCacheThatCannotOpenIsInternalAndNamesTheFile) {
  TempTree tree;
  const auto file = tree.Path("no-such-folder/eval-cache.sqlite");
  auto cache = ResponseCache::Open(file, std::nullopt);
  ASSERT_FALSE(cache);
  EXPECT_EQ(cache.error().code, ErrorCode::kInternal);
  EXPECT_TRUE(cache.error().message.starts_with("cannot open the response cache " + file.string() + ": "))
      << cache.error().message;
}

}  // namespace
}  // namespace skillrunner::eval
