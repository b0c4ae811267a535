#pragma once

// Portable, deterministic hashing and random numbers for the simulated
// provider. Written out (FNV-1a, splitmix64) rather than std::hash or the
// std::*_distribution templates, whose results differ between standard
// libraries: the same request must give the same bytes everywhere.

#include <cstdint>
#include <string_view>

namespace skillrunner::providers::simulation {

// 64-bit FNV-1a over a sequence of byte strings and integers.
class Fnv1a {
 public:
  void Add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      state_ ^= c;
      state_ *= 0x100000001b3ULL;
    }
  }
  // Adds the value as 8 little-endian bytes.
  void Add(std::uint64_t number) {
    for (int i = 0; i < 8; ++i) {
      state_ ^= (number >> (8 * i)) & 0xffU;
      state_ *= 0x100000001b3ULL;
    }
  }
  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

// splitmix64: tiny, fast, and good enough for plausible fake data.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound); 0 when bound is 0. The modulo bias is irrelevant here.
  std::uint64_t Below(std::uint64_t bound) { return bound == 0 ? 0 : Next() % bound; }

  // Uniform in [low, high] (inclusive); low when high < low.
  std::int64_t Between(std::int64_t low, std::int64_t high) {
    if (high <= low) return low;
    auto span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    if (span == UINT64_MAX) return static_cast<std::int64_t>(Next());
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + Below(span + 1));
  }

  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // True with probability numerator/denominator.
  bool Chance(std::uint64_t numerator, std::uint64_t denominator) { return Below(denominator) < numerator; }

 private:
  std::uint64_t state_;
};

}  // namespace skillrunner::providers::simulation
