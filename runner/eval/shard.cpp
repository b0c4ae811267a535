#include "runner/eval/shard.h"

#include <charconv>
#include <optional>

namespace skillrunner::eval {
namespace {

bool ParseInt(std::string_view part, int& out) {
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
  return ec == std::errc() && end == part.data() + part.size() && !part.empty();
}

// One pair of variables: its names, the value of its first index, and what
// sets it (for the message when one of the two is missing).
struct ShardVariables {
  const char* index;
  const char* total;
  int first_index;
  const char* missing_index_hint;
  const char* missing_total_hint;
};

constexpr ShardVariables kKubernetes{"JOB_COMPLETION_INDEX", "JOB_COMPLETIONS", 0,
                                     "Kubernetes sets it in the pods of a Job with completionMode: Indexed",
                                     "set it in the Job's pod template to the Job's spec.completions"};
constexpr ShardVariables kGitLab{"CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab sets it only in a job with parallel:",
                                 "GitLab sets both in a job with parallel:"};

Result<Shard> FromPair(const ShardVariables& names, const std::string& index_text, const std::string& total_text) {
  const std::string prefix = "--shard auto: ";
  int index = 0, total = 0;
  if (!ParseInt(index_text, index)) {
    return Fail(ErrorCode::kConfigInvalid,
                prefix + names.index + " must be a whole number, got \"" + index_text + "\"");
  }
  if (!ParseInt(total_text, total)) {
    return Fail(ErrorCode::kConfigInvalid,
                prefix + names.total + " must be a whole number, got \"" + total_text + "\"");
  }
  const int last = names.first_index == 0 ? total - 1 : total;
  if (total < 1 || index < names.first_index || index > last) {
    return Fail(ErrorCode::kConfigInvalid, prefix + names.index + "=" + index_text + " with " + names.total + "=" +
                                               total_text + ": need " + std::to_string(names.first_index) + " <= " +
                                               names.index + (names.first_index == 0 ? " < " : " <= ") + names.total);
  }
  return Shard{index - names.first_index, total};
}

}  // namespace

std::uint64_t StableHash(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

bool Shard::Contains(std::string_view case_key) const {
  return count <= 1 || StableHash(case_key) % static_cast<std::uint64_t>(count) == static_cast<std::uint64_t>(index);
}

Result<Shard> ParseShard(std::string_view text) {
  std::size_t slash = text.find('/');
  Shard shard;
  auto parse = ParseInt;
  if (slash == std::string_view::npos || !parse(text.substr(0, slash), shard.index) ||
      !parse(text.substr(slash + 1), shard.count)) {
    return Fail(ErrorCode::kConfigInvalid, "--shard must be I/N (e.g. 0/4), got \"" + std::string(text) + "\"");
  }
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    return Fail(ErrorCode::kConfigInvalid, "--shard " + std::string(text) + ": need 0 <= I < N");
  }
  return shard;
}

Result<Shard> ShardFromEnvironment(const EnvLookup& env) {
  for (const ShardVariables* names : {&kKubernetes, &kGitLab}) {
    const std::optional<std::string> index = env(names->index);
    const std::optional<std::string> total = env(names->total);
    if (!index && !total) continue;
    if (!index) {
      return Fail(ErrorCode::kConfigInvalid, std::string("--shard auto: ") + names->total + " is set but " +
                                                 names->index + " is not (" + names->missing_index_hint + ")");
    }
    if (!total) {
      return Fail(ErrorCode::kConfigInvalid, std::string("--shard auto: ") + names->index + " is set but " +
                                                 names->total + " is not (" + names->missing_total_hint + ")");
    }
    return FromPair(*names, *index, *total);
  }
  return Fail(ErrorCode::kConfigInvalid,
              "--shard auto: no shard in the environment: it reads JOB_COMPLETION_INDEX and JOB_COMPLETIONS "
              "(a Kubernetes Indexed Job) or CI_NODE_INDEX and CI_NODE_TOTAL (GitLab parallel:)");
}

}  // namespace skillrunner::eval
