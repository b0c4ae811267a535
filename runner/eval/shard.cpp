#include "runner/eval/shard.h"

#include <charconv>

namespace skillrunner::eval {

std::uint64_t StableHash(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

bool Shard::Contains(std::string_view case_key) const {
  return count <= 1 || StableHash(case_key) % static_cast<std::uint64_t>(count) ==
                           static_cast<std::uint64_t>(index);
}

std::expected<Shard, std::string> ParseShard(std::string_view text) {
  std::size_t slash = text.find('/');
  Shard shard;
  auto parse = [](std::string_view part, int& out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  if (slash == std::string_view::npos || !parse(text.substr(0, slash), shard.index) ||
      !parse(text.substr(slash + 1), shard.count)) {
    return std::unexpected("--shard must be I/N (e.g. 0/4), got \"" + std::string(text) + "\"");
  }
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    return std::unexpected("--shard " + std::string(text) + ": need 0 <= I < N");
  }
  return shard;
}

}  // namespace skillrunner::eval
