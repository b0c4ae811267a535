#pragma once

// --shard I/N: a deterministic slice of a suite's cases. A case belongs to
// shard FNV-1a-64("skill/case#repeat") mod N, so the slices partition the
// suite whatever the case order, concurrency or machine.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "services/common/env.h"
#include "services/common/error.h"

namespace skillrunner::eval {

struct Shard {
  int index = 0;  // 0-based
  int count = 1;

  std::string ToString() const { return std::to_string(index) + "/" + std::to_string(count); }
  bool Contains(std::string_view case_key) const;
};

// "I/N" with 0 <= I < N; the error (CONFIG_INVALID) says what was wrong.
Result<Shard> ParseShard(std::string_view text);

// --shard auto: the slice a parallel job's environment names (design.md §10.3).
// JOB_COMPLETION_INDEX (0-based) with JOB_COMPLETIONS (a Kubernetes Indexed
// Job; Kubernetes sets only the index, the manifest sets the count from
// spec.completions), else CI_NODE_INDEX (1-based) with CI_NODE_TOTAL (GitLab
// `parallel:`). A pair with either variable set is the one used, and must be
// whole; the error (CONFIG_INVALID) says which variable is missing or wrong,
// or, with neither pair set, which variables it reads.
Result<Shard> ShardFromEnvironment(const EnvLookup& env);

// FNV-1a, 64 bit: the same value on every platform.
std::uint64_t StableHash(std::string_view text);

}  // namespace skillrunner::eval
