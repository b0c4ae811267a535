// The rollouts answer of view_json.h: each rollout serve recorded, its arms, each measure's
// confidence sequence over time (from the recorded counts), and its decisions and commands.
#include <map>

#include "runner/eval/records/record_fields.h"
#include "runner/stats/sequential.h"
#include "runner/view/view_json.h"

namespace skillrunner::view {
namespace json = boost::json;

namespace {

stats::ArmCounts ArmOf(const json::object* tally, std::string_view arm) {
  const json::object* counts = eval::ObjectAt(tally, arm);
  return stats::ArmCounts{eval::IntAt(counts, "n").value_or(0), eval::IntAt(counts, "successes").value_or(0)};
}

const json::array* Tallies(const eval::RolloutPoint& point) { return eval::ArrayAt(&point.status, "tallies"); }

// Each measure's sequence at every point: candidate - stable, at alpha / m (m measures) as decided.
json::array Sequences(const std::vector<const eval::RolloutPoint*>& points) {
  std::map<std::string, json::array> by_measure;
  std::vector<std::string> order;
  for (const eval::RolloutPoint* point : points) {
    const json::array* tallies = Tallies(*point);
    if (tallies == nullptr || tallies->empty()) continue;
    const double alpha_each = point->alpha / static_cast<double>(tallies->size());
    for (const json::value& t : *tallies) {
      const json::object* tally = t.if_object();
      const std::string measure(eval::TextAt(tally, "measure"));
      const stats::ArmCounts stable = ArmOf(tally, "stable"), candidate = ArmOf(tally, "candidate");
      const auto cs = stats::DifferenceSequence(stable, candidate, alpha_each, point->tau);
      if (!by_measure.contains(measure)) order.push_back(measure);
      by_measure[measure].push_back(json::object{{"at", point->at},
                                                 {"estimate", cs.estimate},
                                                 {"low", cs.lower},
                                                 {"high", cs.upper},
                                                 {"n_stable", stable.n},
                                                 {"n_candidate", candidate.n}});
    }
  }
  json::array out;
  for (const std::string& measure : order) {
    out.push_back(json::object{{"measure", measure}, {"points", std::move(by_measure[measure])}});
  }
  return out;
}

json::object Arms(const eval::RolloutPoint& last, const std::vector<eval::SampleTally>& samples) {
  json::object arms;
  for (const char* arm : {"stable", "candidate"}) {
    stats::ArmCounts ok;
    if (const json::array* tallies = Tallies(last)) {
      for (const json::value& t : *tallies) {
        if (eval::TextAt(t.if_object(), "measure") == "ok") ok = ArmOf(t.if_object(), arm);
      }
    }
    std::int64_t judged = 0, passed = 0;
    for (const eval::SampleTally& s : samples) {
      if (s.rollout == last.rollout && s.arm == arm) judged = s.judged, passed = s.passed;
    }
    arms[arm] = json::object{{"calls", ok.n}, {"ok", ok.successes}, {"samples", judged}, {"passed", passed}};
  }
  return arms;
}

json::object RolloutJson(const std::vector<const eval::RolloutPoint*>& points,
                         const std::vector<eval::SampleTally>& samples) {
  const eval::RolloutPoint& last = *points.back();
  json::array decisions;
  for (const eval::RolloutPoint* p : points) {
    if (p->kind == "snapshot") continue;
    decisions.push_back(json::object{{"at", p->at},
                                     {"kind", p->kind},
                                     {"state", p->state},
                                     {"traffic", p->traffic},
                                     {"reason", p->reason},
                                     {"replica", p->replica}});
  }
  return json::object{{"rollout", last.rollout},
                      {"skill", last.skill},
                      {"stable_version", last.stable_version},
                      {"candidate_version", last.candidate_version},
                      {"state", last.state},
                      {"traffic", last.traffic},
                      {"updated_at", last.at},
                      {"arms", Arms(last, samples)},
                      {"measures", Sequences(points)},
                      {"decisions", std::move(decisions)}};
}

}  // namespace

json::object RolloutsJson(const std::vector<eval::RolloutPoint>& points,
                          const std::vector<eval::SampleTally>& samples) {
  // The points come by rollout, then time.
  json::array rollouts;
  std::vector<const eval::RolloutPoint*> one;
  for (std::size_t i = 0; i < points.size(); ++i) {
    one.push_back(&points[i]);
    if (i + 1 == points.size() || points[i + 1].rollout != points[i].rollout) {
      rollouts.push_back(RolloutJson(one, samples));
      one.clear();
    }
  }
  return json::object{{"rollouts", std::move(rollouts)}};
}

}  // namespace skillrunner::view
