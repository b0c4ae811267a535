#pragma once

// Which arm of a rollout answers a call (design.md §11.2): deterministic from
// the call's key, so that a caller keeps its arm on every replica with no
// shared state.

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace skillrunner::rollout {

// The first 8 bytes, big-endian, of SHA-256(`skill_id` \0 `candidate_version` \0 `key`).
std::uint64_t AssignmentHash(std::string_view skill_id, int candidate_version, std::string_view key);

// Whether the candidate answers: hash mod 10,000 < traffic · 10,000 (traffic 0 to 1, in steps of 0.0001).
bool ToCandidate(std::uint64_t hash, double traffic);

// The key a call is assigned by: its `routing_key`; else the input's value at the rollout's `sticky`
// JSON pointer (a string as it is, anything else as canonical JSON); else its session; else "" (the
// caller draws a random key: request ids repeat across clients).
std::string AssignmentKey(std::string_view routing_key, const boost::json::value& input, std::string_view sticky,
                          std::string_view session);

}  // namespace skillrunner::rollout
