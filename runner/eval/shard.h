#pragma once

// --shard I/N: a deterministic slice of a suite's cases. A case belongs to
// shard FNV-1a-64("skill/case#repeat") mod N, so the slices partition the
// suite whatever the case order, concurrency or machine.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace skillrunner::eval {

struct Shard {
  int index = 0;  // 0-based
  int count = 1;

  std::string ToString() const { return std::to_string(index) + "/" + std::to_string(count); }
  bool Contains(std::string_view case_key) const;
};

// "I/N" with 0 <= I < N; the error says what was wrong.
std::expected<Shard, std::string> ParseShard(std::string_view text);

// FNV-1a, 64 bit: the same value on every platform.
std::uint64_t StableHash(std::string_view text);

}  // namespace skillrunner::eval
