#include "runner/eval/compare_runs.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>
#include <cmath>

#include "runner/eval/history/stored_runs.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/records/results_log.h"
#include "runner/eval/report/report_markup.h"
#include "runner/pairwise.h"
#include "runner/stats/statistics.h"
#include "runner/tree/judges.h"
#include "services/common/json_text.h"
#include "services/common/text.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace asio = boost::asio;

namespace {

// One case both runs answered.
struct Pair {
  std::string skill, case_id, key;
  const json::value* a = nullptr;
  const json::value* b = nullptr;
  const review::JudgeSpec* judge = nullptr;
  const json::value* input = nullptr;
  std::string first, swapped, result;  // a | b | tie | error
  std::string error;
};

// Which run's output the judge preferred with `first_run`'s shown as A.
asio::awaitable<std::string> Judge(SkillRunner& runner, const Pair& pair, bool a_first, std::string& error) {
  InvocationOptions options;
  options.timeout = std::chrono::milliseconds(120'000);
  const json::value subject = a_first ? PairSubject(*pair.a, *pair.b) : PairSubject(*pair.b, *pair.a);
  InvocationOutcome verdict = co_await runner.Judge(*pair.judge, subject, pair.input, options);
  if (!verdict) {
    error = verdict.error().error.message;
    co_return "error";
  }
  switch (PreferenceOf(verdict->output)) {
    case Preference::kFirst:
      co_return a_first ? "a" : "b";
    case Preference::kSecond:
      co_return a_first ? "b" : "a";
    case Preference::kTie:
      co_return "tie";
  }
  co_return "tie";
}

asio::awaitable<void> Worker(SkillRunner& runner, std::vector<Pair>& pairs, std::size_t& next) {
  while (next < pairs.size()) {
    Pair& pair = pairs[next++];
    pair.first = co_await Judge(runner, pair, true, pair.error);
    pair.swapped = co_await Judge(runner, pair, false, pair.error);
    // A judge that changes its mind when the order changes has no preference.
    pair.result = pair.first == "error" || pair.swapped == "error" ? "error"
                  : pair.first == pair.swapped                     ? pair.first
                                                                   : "tie";
  }
}

struct Tally {
  std::size_t a = 0, b = 0, ties = 0, errors = 0, disagreements = 0;
};

json::object Summarise(const StoredRun& a, const StoredRun& b, const CompareRequest& request,
                       const std::vector<Pair>& pairs) {
  std::map<std::string, Tally> tallies;
  json::array cases;
  for (const Pair& pair : pairs) {
    Tally& t = tallies[pair.skill];
    t.a += pair.result == "a";
    t.b += pair.result == "b";
    t.ties += pair.result == "tie";
    t.errors += pair.result == "error";
    t.disagreements += pair.result == "tie" && pair.first != pair.swapped;
    json::object entry{{"skill", pair.skill},
                       {"case", pair.case_id},
                       {"a_first", pair.first},
                       {"b_first", pair.swapped},
                       {"result", pair.result}};
    if (!pair.error.empty()) entry["judge_error"] = pair.error;
    cases.push_back(std::move(entry));
  }
  json::object skills;
  for (const auto& [skill, t] : tallies) {
    skills[skill] = json::object{{"pairs", t.a + t.b + t.ties + t.errors},
                                 {"a_wins", t.a},
                                 {"b_wins", t.b},
                                 {"ties", t.ties},
                                 {"order_disagreements", t.disagreements},
                                 {"judge_errors", t.errors},
                                 {"sign_test_p", std::round(stats::SignTestP(t.a, t.b) * 1e9) / 1e9}};
  }
  return json::object{{"run_a", a.run_id},           {"run_b", b.run_id},
                      {"rubric", request.rubric},    {"judge_model", request.judge_model},
                      {"skills", std::move(skills)}, {"cases", std::move(cases)}};
}

std::string CompareHtml(const json::object& comparison) {
  using report::EscapeMarkup;
  std::string html =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" "
      "content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>Compare</title><style>"
      "body{font:14px/1.45 system-ui,sans-serif;margin:20px;color:#222}table{border-collapse:collapse}"
      "th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th.name,td.name{text-align:left}"
      "</style></head><body><h1>Pairwise comparison</h1><p>Run A <b>" +
      EscapeMarkup(json::value_to<std::string>(comparison.at("run_a"))) + "</b> against run B <b>" +
      EscapeMarkup(json::value_to<std::string>(comparison.at("run_b"))) + "</b>, rubric <b>" +
      EscapeMarkup(json::value_to<std::string>(comparison.at("rubric"))) +
      "</b>. Each pair was judged twice with the order swapped; a judge that changed its mind is a tie. The "
      "sign test is two-sided over wins and losses (ties left out).</p><table><thead><tr><th class=\"name\">Skill"
      "</th><th>Pairs</th><th>A wins</th><th>B wins</th><th>Ties</th><th>Of which the order decided</th><th>Judge "
      "errors</th><th>Sign test p</th></tr></thead><tbody>";
  for (const auto& [skill, value] : comparison.at("skills").as_object()) {
    const json::object& s = value.as_object();
    html += "<tr><td class=\"name\">" + EscapeMarkup(skill) + "</td>";
    for (const char* key : {"pairs", "a_wins", "b_wins", "ties", "order_disagreements", "judge_errors"}) {
      html += "<td>" + json::serialize(s.at(key)) + "</td>";
    }
    const double p = s.at("sign_test_p").to_number<double>();
    html += "<td>" + (p < 1e-9 ? std::string("&lt; 1e-9") : report::FormatSignificant(p)) + "</td></tr>";
  }
  return html + "</tbody></table></body></html>\n";
}

// The cases both runs have an output for, each with its skill's pairwise judge.
Result<void> MakePairs(const SkillRegistry& registry, const CompareRequest& request, const StoredRun& a,
                       const StoredRun& b, const std::shared_ptr<const review::Rubric>& pairwise,
                       std::map<std::string, review::JudgeSpec>& judges, std::vector<Pair>& pairs) {
  std::map<std::string, const json::object*> b_by_key;
  for (const json::object& record : b.records) b_by_key[CaseKey(record)] = &record;
  for (const json::object& record : a.records) {
    auto other = b_by_key.find(CaseKey(record));
    if (other == b_by_key.end() || !OutputOf(record) || !OutputOf(*other->second)) continue;
    const std::string skill_id(SkillIdOf(record));
    const Skill* skill = registry.FindSkill(skill_id);
    if (skill == nullptr) continue;
    if (!judges.contains(skill_id)) {
      auto judge = JudgeOnModel(*skill, request.judge_model.empty() ? skill->model : request.judge_model,
                                registry.config(), pairwise, skill_id + ".compare", 1);
      if (!judge) return std::unexpected(std::move(judge.error()));
      judges.emplace(skill_id, std::move(*judge));
    }
    Pair pair{skill_id,
              std::string(CaseIdOf(record)),
              CaseKey(record),
              OutputOf(record),
              OutputOf(*other->second),
              &judges.at(skill_id),
              nullptr,
              "",
              "",
              "",
              ""};
    if (auto input = request.inputs.find(pair.key); input != request.inputs.end()) pair.input = &input->second;
    pairs.push_back(std::move(pair));
  }
  return {};
}

}  // namespace

int CompareRuns(const SkillRegistry& registry, const CompareRequest& request, const RunnerFactory& make_runner,
                const Say& say) {
  auto fail = [&](const std::string& message) {
    say("skillrunner eval compare: " + message);
    return kRunError;
  };
  auto a = LoadStoredRun(request.run_a, request.history);
  if (!a) return fail("run A: " + a.error().message);
  auto b = LoadStoredRun(request.run_b, request.history);
  if (!b) return fail("run B: " + b.error().message);
  const review::Rubric* rubric = registry.FindRubric(request.rubric);
  if (rubric == nullptr) return fail("unknown rubric \"" + request.rubric + "\"");
  auto pairwise = PairwiseRubric(*rubric);
  if (!pairwise) return fail(pairwise.error().message);

  std::map<std::string, review::JudgeSpec> judges;
  std::vector<Pair> pairs;
  if (auto made = MakePairs(registry, request, *a, *b, *pairwise, judges, pairs); !made)
    return fail(made.error().message);
  std::sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) { return x.key < y.key; });
  if (pairs.empty()) return fail("runs " + a->run_id + " and " + b->run_id + " have no case with an output in both");
  say("skillrunner eval compare: " + std::to_string(pairs.size()) + " pair(s) of runs " + a->run_id + " and " +
      b->run_id + ", each judged twice (the order swapped); no generation request");

  asio::io_context io;
  auto runner = make_runner(io.get_executor());
  if (!runner) return fail(runner.error().message);
  std::size_t next = 0;
  for (int i = 0; i < std::max(1, request.concurrency); ++i) {
    asio::co_spawn(io, Worker(**runner, pairs, next), asio::detached);
  }
  io.run();

  json::object comparison = Summarise(*a, *b, request, pairs);
  std::error_code ec;
  std::filesystem::create_directories(request.out, ec);
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"compare.json", PrettyJson(comparison) + "\n"},
                                   {"compare.html", CompareHtml(comparison)}}) {
    if (auto written = WriteFileAtomically(request.out / name, text); !written) return fail(written.error().message);
  }
  for (const auto& [skill, value] : comparison.at("skills").as_object()) {
    const json::object& s = value.as_object();
    say("skillrunner eval compare: " + std::string(skill) + ": A wins " + json::serialize(s.at("a_wins")) +
        ", B wins " + json::serialize(s.at("b_wins")) + ", ties " + json::serialize(s.at("ties")) + " (" +
        json::serialize(s.at("order_disagreements")) + " from the order), judge errors " +
        json::serialize(s.at("judge_errors")) + "; sign test " + PValueText(s.at("sign_test_p").to_number<double>()));
  }
  say("skillrunner eval compare: reports in " + request.out.string() + " (compare.json, compare.html)");
  return 0;
}

}  // namespace skillrunner::eval
