#include "runner/rollout/assignment.h"

#include <cmath>
#include <system_error>

#include "services/common/digest.h"

namespace skillrunner::rollout {

std::uint64_t AssignmentHash(std::string_view skill_id, int candidate_version, std::string_view key) {
  std::string text(skill_id);
  text += '\0';
  text += std::to_string(candidate_version);
  text += '\0';
  text += key;
  const std::array<unsigned char, 32> digest = Sha256(text);
  std::uint64_t hash = 0;
  for (std::size_t i = 0; i < 8; ++i) hash = (hash << 8) | digest[i];
  return hash;
}

bool ToCandidate(std::uint64_t hash, double traffic) {
  const auto threshold = static_cast<std::uint64_t>(std::llround(traffic * 10000.0));
  return hash % 10000 < threshold;
}

std::string AssignmentKey(std::string_view routing_key, const boost::json::value& input, std::string_view sticky,
                          std::string_view session) {
  if (!routing_key.empty()) return std::string(routing_key);
  if (!sticky.empty()) {
    std::error_code ec;
    if (const boost::json::value* at = input.find_pointer(sticky, ec); at != nullptr && !ec) {
      return at->is_string() ? std::string(at->as_string()) : CanonicalJson(*at);
    }
  }
  return std::string(session);
}

}  // namespace skillrunner::rollout
