#include "runner/rollout_routing.h"

#include <random>

#include "runner/rollout/assignment.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

constexpr std::string_view kStable = "stable";
constexpr std::string_view kCandidate = "candidate";

Route Arm(const Skill& skill, bool candidate, bool counted) {
  return Route{&skill, Served{skill.version, candidate ? kCandidate : kStable}, counted};
}

// A key for a call that brings none: request ids repeat across clients, so the server draws.
std::uint64_t Drawn() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine();
}

std::optional<bool> OkOf(const InvocationOutcome& outcome) {
  if (outcome) return !(outcome->review && ReviewFailed(*outcome->review));
  switch (outcome.error().error.code) {
    case ErrorCode::kMaxRetriesExceeded:
    case ErrorCode::kTruncated:
    case ErrorCode::kRefused:
    case ErrorCode::kContentFiltered:
    case ErrorCode::kHandlerFailed:
    case ErrorCode::kTimeout:
    case ErrorCode::kBudgetExceeded:
    case ErrorCode::kProviderError:
    case ErrorCode::kJudgeError:
      return false;
    default:
      return std::nullopt;  // the caller's or the provider's: not the version's doing
  }
}

}  // namespace

std::expected<Route, Error> RouteCall(const Skill& stable, const json::value& input, const InvocationOptions& options,
                                      rollout::RolloutBook* book) {
  const Skill* candidate = stable.candidate.get();
  if (options.version) {
    if (*options.version == stable.version) return Arm(stable, false, false);
    if (candidate && *options.version == candidate->version) return Arm(*candidate, true, false);
    std::string versions =
        std::to_string(stable.version) + (candidate ? ", " + std::to_string(candidate->version) : "");
    return std::unexpected(Error{ErrorCode::kSkillNotFound,
                                 "skill \"" + stable.id + "\" has no version " + std::to_string(*options.version) +
                                     " (versions: " + versions + ")",
                                 {},
                                 {}});
  }
  if (!candidate) return Route{&stable, Served{stable.version, {}}, false};
  if (!book) return Arm(stable, false, false);
  const rollout::RolloutSpec& spec = *stable.rollout;
  const double traffic = book->Traffic(spec);
  std::string key =
      rollout::AssignmentKey(options.routing_key.value_or(""), input, spec.sticky, options.session.value_or(""));
  const std::uint64_t hash = key.empty() ? Drawn() : rollout::AssignmentHash(stable.id, candidate->version, key);
  const bool to_candidate = traffic > 0 && rollout::ToCandidate(hash, traffic);
  return to_candidate ? Arm(*candidate, true, true) : Arm(stable, false, true);
}

void CountOutcome(const Skill& stable, const Route& route, const InvocationOutcome& outcome,
                  rollout::RolloutBook& book) {
  if (!route.counted || !stable.rollout) return;
  const rollout::RolloutSpec& spec = *stable.rollout;
  const rollout::Arm arm = route.served.arm == kCandidate ? rollout::Arm::kCandidate : rollout::Arm::kStable;
  if (auto ok = OkOf(outcome)) book.Count(spec, arm, rollout::Measure::kOk, *ok);
  if (outcome && outcome->review) {
    book.Count(spec, arm, rollout::Measure::kReviewPass, !ReviewFailed(*outcome->review));
  }
}

}  // namespace skillrunner
