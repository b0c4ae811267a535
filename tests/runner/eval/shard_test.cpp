// --shard I/N: parsing and a deterministic partition.
#include "runner/eval/shard.h"

#include <gtest/gtest.h>

namespace skillrunner::eval {
namespace {

TEST(EvalShardTest, ParsesIOfNAndRefusesNonsense) {
  auto shard = ParseShard("1/4");
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->index, 1);
  EXPECT_EQ(shard->count, 4);
  EXPECT_EQ(shard->ToString(), "1/4");
  EXPECT_EQ(ParseShard("4/4").error().message, "--shard 4/4: need 0 <= I < N");
  EXPECT_EQ(ParseShard("1-4").error().message, "--shard must be I/N (e.g. 0/4), got \"1-4\"");
  EXPECT_EQ(ParseShard("0/0").error().message, "--shard 0/0: need 0 <= I < N");
  EXPECT_EQ(ParseShard("1-4").error().code, ErrorCode::kConfigInvalid);  // a bad flag
}

TEST(EvalShardTest, EveryKeyLandsInExactlyOneShard) {
  constexpr int kShards = 3;
  int counts[kShards] = {};
  for (int i = 0; i < 3000; ++i) {
    std::string key = "skill/case" + std::to_string(i);
    int owners = 0;
    for (int s = 0; s < kShards; ++s) {
      if (Shard{s, kShards}.Contains(key)) {
        ++owners;
        ++counts[s];
      }
    }
    ASSERT_EQ(owners, 1) << key;
  }
  for (int c : counts) EXPECT_GT(c, 800);  // roughly even
  // FNV-1a 64 of "a": the same on every machine, so shards agree across hosts.
  EXPECT_EQ(StableHash("a"), 0xaf63dc4c8601ec8cull);
}

}  // namespace
}  // namespace skillrunner::eval
