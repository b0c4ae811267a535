#include "runner/eval/suite.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "runner/stats/statistics.h"
#include "runner/tree/judges.h"
#include "runner/tree/lint_codes.h"
#include "services/common/json_text.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

std::optional<double> RateAt(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}

Thresholds ParseThresholds(const json::value* value) {
  Thresholds t;
  if (!value || !value->is_object()) return t;
  const json::object& obj = value->as_object();
  t.schema_compliance = RateAt(obj, "schema_compliance");
  t.rubric_pass_rate = RateAt(obj, "rubric_pass_rate");
  t.expected_match = RateAt(obj, "expected_match");
  t.check_pass_rate = RateAt(obj, "check_pass_rate");
  t.max_regression = RateAt(obj, "max_regression");
  t.criterion_pass_rate = RateAt(obj, "criterion_pass_rate");
  t.max_judge_error_rate = RateAt(obj, "max_judge_error_rate");
  t.max_indeterminate_rate = RateAt(obj, "max_indeterminate_rate");
  t.max_refusal_rate = RateAt(obj, "max_refusal_rate");
  t.max_cost_usd = RateAt(obj, "max_cost_usd");
  if (const json::value* criteria = obj.if_contains("criteria"); criteria && criteria->is_object()) {
    for (const auto& [id, rate] : criteria->as_object()) {
      if (rate.is_number()) t.criteria[std::string(id)] = rate.to_number<double>();
    }
  }
  return t;
}

// The criteria that decide a review's pass (services/review/aggregate.h):
// the required ones under the "required" rule, else all.
std::set<std::string> CountedCriteria(const Rubric& rubric) {
  bool any_required =
      std::any_of(rubric.criteria.begin(), rubric.criteria.end(), [](const Criterion& c) { return c.required; });
  bool only_required = rubric.pass_rule == "required" || (rubric.pass_rule.empty() && any_required);
  std::set<std::string> counted;
  for (const Criterion& c : rubric.criteria) {
    if (!only_required || c.required) counted.insert(c.id);
  }
  return counted;
}

std::string Hint(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    std::size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best.empty() ? std::string() : " (did you mean \"" + best + "\"?)";
}

// Everything about one `skills:` entry that needs the registry.
class EntryChecker {
 public:
  EntryChecker(const YamlDocument& doc, std::string file, const SkillRegistry& registry,
               std::vector<Diagnostic>& problems)
      : doc_(doc), file_(std::move(file)), registry_(registry), problems_(problems) {}

  // The entry at skill `id`'s stable version, or its candidate.
  std::optional<SuiteSkill> Check(const json::object& entry, const std::string& pointer,
                                  const Thresholds& suite_thresholds, const std::string& id, bool candidate) {
    const Skill* skill = registry_.FindSkill(id);
    if (!skill) {
      auto similar = registry_.SimilarSkillIds(id);
      std::string hint = similar.empty() ? "" : " (did you mean \"" + similar.front() + "\"?)";
      Report(pointer + "/skill", "unknown skill \"" + id + "\"" + hint);
      return std::nullopt;
    }
    SuiteSkill out;
    out.label = id;
    if (candidate) {
      if (!skill->candidate) {
        Report(pointer + (entry.contains("versions") ? "/versions" : "/skill"),
               "skill \"" + id + "\" has no candidate to run (its skill.yaml has no rollout: block)");
        return std::nullopt;
      }
      skill = skill->candidate.get();
      out.version = skill->version;
      out.label = id + "@" + std::to_string(skill->version);
    }
    out.skill = skill;
    out.thresholds = suite_thresholds.Overlay(ParseThresholds(entry.if_contains("thresholds")));
    if (const json::value* mode = entry.if_contains("expected")) {
      out.expected = mode->as_string() == "exact" ? ExpectedMode::kExact : ExpectedMode::kSubset;
    }
    if (!ResolveJudge(entry, pointer, *skill, out)) return std::nullopt;
    const json::value* cases = entry.if_contains("cases");
    out.cases_file = skill->dir / (cases ? std::string(cases->as_string()) : std::string("cases.jsonl"));
    LoadedDataset dataset = LoadDataset(out.cases_file);
    if (!dataset.readable) {
      Report(pointer + (cases ? "/cases" : "/skill"),
             "cannot read the dataset of skill \"" + id + "\": " + out.cases_file.string());
      return std::nullopt;
    }
    // One pass: the lines that did not parse, and the schema checks of those that did, in line order.
    out.cases = std::move(dataset.cases);
    std::vector<Diagnostic> found = std::move(dataset.problems);
    CheckDatasetCases(*out.skill, out.expected, out.cases_file, out.cases, found);
    JudgeCaseCriteria(out, found);
    std::stable_sort(found.begin(), found.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.position.line < b.position.line; });
    if (found.empty()) return out;
    for (auto& d : found) problems_.push_back(std::move(d));
    return std::nullopt;
  }

 private:
  // design.md §12.3: each case with `criteria` gets a judge of its own: the entry's rubric with them
  // after its own criteria (no id may clash), on the entry's judge model. Problems at the case's line.
  void JudgeCaseCriteria(SuiteSkill& out, std::vector<Diagnostic>& found) const {
    const std::string file = out.cases_file.string();
    for (const EvalCase& c : out.cases) {
      if (c.criteria.empty()) continue;
      auto place = [&](const std::string& message) {
        found.push_back(Diagnostic{file, {c.line, 1}, "case \"" + c.id + "\": /criteria: " + message});
      };
      const auto* rubric = out.rubric.empty() ? nullptr : registry_.FindRubric(out.rubric);
      if (rubric == nullptr) {
        place("a case's criteria are judged with its skill's rubric, and the suite entry of skill \"" + out.skill->id +
              "\" has none (give it rubric: and judge_model:)");
        continue;
      }
      std::vector<review::Criterion> extra;
      bool clashed = false;
      for (const CaseCriterion& criterion : c.criteria) {
        const bool clash = std::any_of(rubric->criteria.begin(), rubric->criteria.end(),
                                       [&](const review::Criterion& own) { return own.id == criterion.id; });
        if (clash) place("\"" + criterion.id + "\" is a criterion of rubric " + rubric->id + " already");
        clashed = clashed || clash;
        extra.push_back(review::Criterion{criterion.id, criterion.description, criterion.required, "", {}});
      }
      if (clashed) continue;
      auto extended = RubricWithCriteria(*rubric, std::move(extra));
      auto judge = extended ? JudgeOnModel(*out.skill, out.judge_model, registry_.config(), *extended,
                                           out.skill->id + ".eval", out.judge ? out.judge->samples : 1)
                            : std::unexpected(extended.error());
      if (!judge) {
        place(judge.error().message);
        continue;
      }
      out.case_judges[c.id] = std::make_shared<const review::JudgeSpec>(std::move(*judge));
    }
  }

  void Report(const std::string& pointer, std::string message) {
    problems_.push_back(Diagnostic{file_, doc_.positions.Find(pointer), pointer + ": " + std::move(message)});
  }

  bool ResolveJudge(const json::object& entry, const std::string& pointer, const Skill& skill, SuiteSkill& out) {
    const json::value* rubric = entry.if_contains("rubric");
    const json::value* model = entry.if_contains("judge_model");
    out.rubric = rubric ? std::string(rubric->as_string()) : skill.review ? skill.review->rubric : "";
    if (out.rubric.empty()) {
      if (model)
        Report(pointer + "/judge_model",
               "judge_model without a rubric (skill \"" + skill.id + "\" has no review gate to take one from)");
      return !model;
    }
    if (!registry_.FindRubric(out.rubric)) {
      std::vector<std::string> ids;
      for (const auto& r : registry_.rubrics()) ids.push_back(r->id);
      Report(pointer + "/rubric", "unknown rubric \"" + out.rubric + "\"" + Hint(out.rubric, ids));
      return false;
    }
    std::string gate_model = skill.review ? skill.review->model.value_or(skill.model) : "";
    out.judge_model = model ? std::string(model->as_string()) : skill.review ? gate_model : skill.model;
    if (out.judge_model.empty()) {
      Report(pointer + (rubric ? "/rubric" : "/skill"),
             "skill \"" + skill.id + "\" has no model of its own; set judge_model to judge it");
      return false;
    }
    out.judge_is_gate = skill.review && out.rubric == skill.review->rubric && out.judge_model == gate_model;
    auto judge = JudgeOnModel(skill, out.judge_model, registry_.config(), registry_.FindRubricShared(out.rubric),
                              skill.id + ".eval", out.judge_is_gate ? skill.review->samples : 1);
    if (!judge) {
      Report(pointer + (model ? "/judge_model" : "/skill"), judge.error().message);
      return false;
    }
    out.judge = std::make_shared<const review::JudgeSpec>(std::move(*judge));
    out.counted_criteria = CountedCriteria(*registry_.FindRubric(out.rubric));
    return true;
  }

  const YamlDocument& doc_;
  std::string file_;
  const SkillRegistry& registry_;
  std::vector<Diagnostic>& problems_;
};

}  // namespace

Thresholds Thresholds::Overlay(const Thresholds& over) const {
  Thresholds t = *this;
  if (over.schema_compliance) t.schema_compliance = over.schema_compliance;
  if (over.rubric_pass_rate) t.rubric_pass_rate = over.rubric_pass_rate;
  if (over.expected_match) t.expected_match = over.expected_match;
  if (over.check_pass_rate) t.check_pass_rate = over.check_pass_rate;
  if (over.max_regression) t.max_regression = over.max_regression;
  if (over.criterion_pass_rate) t.criterion_pass_rate = over.criterion_pass_rate;
  if (over.max_judge_error_rate) t.max_judge_error_rate = over.max_judge_error_rate;
  if (over.max_indeterminate_rate) t.max_indeterminate_rate = over.max_indeterminate_rate;
  if (over.max_refusal_rate) t.max_refusal_rate = over.max_refusal_rate;
  t.max_cost_usd = over.max_cost_usd;  // per skill only: the suite's is the run's
  for (const auto& [id, rate] : over.criteria) t.criteria[id] = rate;
  return t;
}

std::size_t Suite::CaseCount() const {
  std::size_t n = 0;
  for (const auto& s : skills) n += s.cases.size();
  return n * static_cast<std::size_t>(repeats);
}

const SuiteSkill* Suite::Find(std::string_view label) const {
  for (const auto& s : skills) {
    if (s.label == label) return &s;
  }
  return nullptr;
}

namespace {

// Which versions of its skill an entry runs (design.md §11.2).
struct EntryVersions {
  std::string id;
  bool stable = true;
  bool candidate = false;
};

// `skill: ID@candidate`, or `versions: stable|candidate|both` (not both spellings).
std::expected<EntryVersions, std::string> ReadVersions(const json::object& entry) {
  constexpr std::string_view kSuffix = "@candidate";
  EntryVersions out{std::string(entry.at("skill").as_string())};
  const json::value* versions = entry.if_contains("versions");
  if (out.id.ends_with(kSuffix)) {
    if (versions) return std::unexpected("give either versions or \"skill: " + out.id + "\", not both");
    out.id.resize(out.id.size() - kSuffix.size());
    out.stable = false;
    out.candidate = true;
  } else if (versions) {
    out.stable = versions->as_string() != "candidate";
    out.candidate = versions->as_string() != "stable";
  }
  return out;
}

// Each candidate entry whose skill's stable version runs too.
std::vector<VersionPair> PairVersions(const std::vector<SuiteSkill>& skills) {
  std::vector<VersionPair> pairs;
  for (const SuiteSkill& candidate : skills) {
    if (!candidate.version) continue;
    for (const SuiteSkill& stable : skills) {
      if (stable.version || stable.label != candidate.skill->id) continue;
      pairs.push_back(VersionPair{stable.label, stable.skill->version, *candidate.version, candidate.label});
    }
  }
  return pairs;
}

// The suite's `batch:` block (checked against the schema already).
std::optional<SuiteBatch> ReadBatch(const json::object& root) {
  const json::value* block = root.if_contains("batch");
  if (block == nullptr || !block->is_object()) return std::nullopt;
  const json::object& b = block->as_object();
  SuiteBatch out;
  if (const json::value* v = b.if_contains("max_requests"); v && JsonInteger(*v)) {
    out.max_requests = static_cast<std::size_t>(*JsonInteger(*v));
  }
  if (const json::value* v = b.if_contains("send_after_s")) out.send_after_s = v->to_number<double>();
  if (const json::value* v = b.if_contains("poll_interval_s")) out.poll_interval_s = v->to_number<double>();
  if (const json::value* v = b.if_contains("fallback")) out.fallback_online = v->as_string() == "online";
  return out;
}

// The suite's `rate_limits`, with a warning for each provider the config does not have.
void ReadRateLimits(const json::object& root, const YamlDocument& doc, const std::string& file,
                    const SkillRegistry& registry, Suite& suite) {
  const json::value* limits = root.if_contains("rate_limits");
  if (!limits) return;
  for (const auto& [name, limit] : limits->as_object()) {
    suite.rate_limits[std::string(name)] =
        RateLimit{RateAt(limit.as_object(), "requests_per_minute"), RateAt(limit.as_object(), "tokens_per_minute")};
    if (registry.config().providers.contains(name)) continue;
    std::vector<std::string> names;
    for (const auto& [n, unused] : registry.config().providers) names.push_back(n);
    std::string pointer = AppendPointer("/rate_limits", name);
    suite.warnings.push_back(Diagnostic{file, doc.positions.FindKey(pointer),
                                        pointer + ": the config has no provider \"" + std::string(name) +
                                            "\"; its limits are ignored" + Hint(name, names),
                                        Diagnostic::Severity::kWarning});
  }
}

// `lint: {allow: [code, ...]}`: the suite's warnings it acknowledges (still listed, not printed);
// an allowed code that is no warning's is an error, as in a skill.
std::vector<Diagnostic> ReadLintAllow(const json::object& root, const YamlDocument& doc, const std::string& file,
                                      std::vector<Diagnostic>& warnings) {
  std::vector<Diagnostic> problems;
  const json::value* allow = root.contains("lint") ? root.at("lint").as_object().if_contains("allow") : nullptr;
  if (allow == nullptr) return problems;
  std::set<std::string, std::less<>> codes;
  for (std::size_t i = 0; i < allow->as_array().size(); ++i) {
    const std::string_view slug = allow->as_array()[i].as_string();
    if (std::string why = AllowProblem(slug); !why.empty()) {
      const std::string pointer = "/lint/allow/" + std::to_string(i);
      problems.push_back(Diagnostic{file, doc.positions.Find(pointer), pointer + ": " + why,
                                    Diagnostic::Severity::kError, "allow-unknown"});
    }
    codes.emplace(slug);
  }
  for (Diagnostic& d : warnings) d.acknowledged = d.acknowledged || codes.contains(d.code);
  return problems;
}

// design.md §12.3: a max_regression that can never fire, because even every paired case flipping
// one way would give a McNemar p at or above the suite's alpha; `at` is the entry's place.
void WarnIfUnderpowered(const SuiteSkill& entry, const Suite& suite, Diagnostic at, std::vector<Diagnostic>& warnings) {
  const std::size_t n = entry.cases.size() * static_cast<std::size_t>(suite.repeats);
  if (!entry.thresholds.max_regression || n == 0 || stats::McNemarExactP(n, 0) < suite.regression_alpha) return;
  std::size_t needed = n;
  while (stats::McNemarExactP(needed, 0) >= suite.regression_alpha) ++needed;
  char p[32];
  std::snprintf(p, sizeof p, "%.3g", stats::McNemarExactP(n, 0));
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%.3g", suite.regression_alpha);
  at.message += ": skill \"" + entry.label + "\" has " + std::to_string(n) +
                " paired case(s) per run, too few for max_regression ever to fire at regression_alpha " + alpha +
                " (every case flipping one way still gives McNemar p = " + p + "); it needs at least " +
                std::to_string(needed);
  at.severity = Diagnostic::Severity::kWarning;
  at.code = "underpowered-gate";
  warnings.push_back(std::move(at));
}

// The `skills:` entries, each version an entry runs as one SuiteSkill (design.md §11.2).
void ReadEntries(const json::array& entries, const YamlDocument& doc, const std::string& file,
                 const SkillRegistry& registry, const Thresholds& thresholds, Suite& suite,
                 std::vector<Diagnostic>& problems) {
  EntryChecker checker(doc, file, registry, problems);
  std::set<std::string> seen;  // "<id>" and "<id>@candidate"
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string pointer = "/skills/" + std::to_string(i);
    const json::object& entry = entries[i].as_object();
    auto which = ReadVersions(entry);
    if (!which) {
      problems.push_back(
          Diagnostic{file, doc.positions.Find(pointer + "/versions"), pointer + "/versions: " + which.error()});
      continue;
    }
    for (bool candidate : {false, true}) {
      if (!(candidate ? which->candidate : which->stable)) continue;
      std::string name = which->id + (candidate ? "@candidate" : "");
      if (!seen.insert(name).second) {
        problems.push_back(Diagnostic{file, doc.positions.Find(pointer + "/skill"),
                                      pointer + "/skill: skill \"" + name + "\" is listed twice"});
        continue;
      }
      auto checked = checker.Check(entry, pointer, thresholds, which->id, candidate);
      if (!checked) break;  // reported once: the candidate shares the entry's dataset and judge
      if (const json::value* batch = entry.if_contains("batch")) checked->batch = batch->as_bool();
      WarnIfUnderpowered(*checked, suite, Diagnostic{file, doc.positions.Find(pointer), pointer}, suite.warnings);
      checked->redact = suite.redact;
      suite.skills.push_back(std::move(*checked));
    }
  }
}

std::expected<Suite, std::vector<Diagnostic>> LoadSuiteDocument(const std::filesystem::path& path,
                                                                std::expected<YamlDocument, Diagnostic> doc,
                                                                const SkillRegistry& registry) {
  std::string file = path.string();
  if (!doc) {
    if (doc.error().message == "cannot read file") doc.error().message = "cannot read suite file";
    return std::unexpected(std::vector<Diagnostic>{doc.error()});
  }
  std::vector<Diagnostic> problems = CheckAgainstEmbeddedSchema(*doc, file, "suite.schema.json");
  if (!problems.empty()) {
    // In file order, as a reader goes through the suite.
    std::stable_sort(problems.begin(), problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::pair(a.position.line, a.position.column) < std::pair(b.position.line, b.position.column);
    });
    return std::unexpected(std::move(problems));
  }
  const json::object& root = doc->value.as_object();
  Suite suite;
  suite.id = std::string(root.at("id").as_string());
  suite.file = path;
  // An integer of the schema may be written 2.0 (found by the suite_yaml fuzz target: as_int64 threw on it).
  if (const json::value* c = root.if_contains("concurrency"); c && JsonInteger(*c)) {
    suite.concurrency = static_cast<int>(*JsonInteger(*c));
  }
  if (const json::value* r = root.if_contains("repeats"); r && JsonInteger(*r)) {
    suite.repeats = static_cast<int>(*JsonInteger(*r));
  }
  if (const json::value* g = root.if_contains("gate_unstable_criteria")) suite.gate_unstable_criteria = g->as_bool();
  if (const json::value* a = root.if_contains("regression_alpha")) suite.regression_alpha = a->to_number<double>();
  if (const json::value* k = root.if_contains("min_judge_kappa")) suite.min_judge_kappa = k->to_number<double>();
  if (const json::value* redact = root.if_contains("redact")) {
    for (const json::value& pointer : redact->as_array()) suite.redact.emplace_back(pointer.as_string());
  }
  ReadRateLimits(root, *doc, file, registry, suite);
  suite.batch = ReadBatch(root);
  Thresholds thresholds = ParseThresholds(root.if_contains("thresholds"));
  suite.max_cost_usd = thresholds.max_cost_usd;
  ReadEntries(root.at("skills").as_array(), *doc, file, registry, thresholds, suite, problems);
  if (!problems.empty()) return std::unexpected(std::move(problems));
  if (auto allowed = ReadLintAllow(root, *doc, file, suite.warnings); !allowed.empty()) {
    return std::unexpected(std::move(allowed));
  }
  suite.version_pairs = PairVersions(suite.skills);
  return suite;
}

}  // namespace

std::expected<Suite, std::vector<Diagnostic>> LoadSuite(const std::filesystem::path& path,
                                                        const SkillRegistry& registry) {
  return LoadSuiteDocument(path, LoadYamlFile(path.string()), registry);
}

std::expected<Suite, std::vector<Diagnostic>> LoadSuiteText(const std::filesystem::path& path, std::string_view text,
                                                            const SkillRegistry& registry) {
  return LoadSuiteDocument(path, ParseYamlText(path.string(), text), registry);
}

}  // namespace skillrunner::eval
