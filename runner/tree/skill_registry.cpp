#include "runner/tree/skill_registry.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "runner/tree/judges.h"
#include "services/review/prepared_judge.h"

namespace skillrunner {
namespace json = boost::json;
namespace fs = std::filesystem;

std::expected<Rubric, std::vector<Diagnostic>> LoadRubricFile(const std::string& path) {
  auto doc = LoadYamlFile(path);
  if (!doc) return std::unexpected(std::vector<Diagnostic>{doc.error()});
  auto problems = CheckAgainstEmbeddedSchema(*doc, path, "rubric.schema.json");
  if (!problems.empty()) return std::unexpected(std::move(problems));
  const json::object& root = doc->value.as_object();
  Rubric rubric;
  rubric.file = path;
  rubric.id = std::string(root.at("id").as_string());
  if (auto* v = root.if_contains("description")) rubric.description = std::string(v->as_string());
  if (auto* v = root.if_contains("indeterminate_below_confidence")) {
    rubric.indeterminate_below_confidence = v->to_number<double>();
  }
  if (auto* v = root.if_contains("pass_rule")) rubric.pass_rule = std::string(v->as_string());
  std::set<std::string> seen;
  const json::array& criteria = root.at("criteria").as_array();
  for (std::size_t i = 0; i < criteria.size(); ++i) {
    const json::object& c = criteria[i].as_object();
    Criterion criterion;
    criterion.id = std::string(c.at("id").as_string());
    criterion.description = std::string(c.at("description").as_string());
    if (auto* v = c.if_contains("required")) criterion.required = v->as_bool();
    if (auto* v = c.if_contains("guidance")) criterion.guidance = std::string(v->as_string());
    if (auto* v = c.if_contains("examples")) criterion.examples = v->as_array();
    if (!seen.insert(criterion.id).second) {
      std::string pointer = "/criteria/" + std::to_string(i) + "/id";
      problems.push_back(
          {path, doc->positions.Find(pointer), pointer + ": duplicate criterion id \"" + criterion.id + "\""});
    }
    rubric.criteria.push_back(std::move(criterion));
  }
  if (!problems.empty()) return std::unexpected(std::move(problems));
  auto judge = review::PrepareJudge(rubric);
  if (!judge) return std::unexpected(std::vector<Diagnostic>{{path, {}, judge.error().message}});
  rubric.judge = std::move(*judge);
  return rubric;
}

namespace {

// The id a file meant to define (its `id:` when it is a string, else the
// name the file or folder gives it), for "did not load" answers.
std::string IntendedId(const std::string& file, const std::string& fallback) {
  auto doc = LoadYamlFile(file);
  if (doc && doc->value.is_object()) {
    if (const auto* id = doc->value.as_object().if_contains("id"); id && id->is_string()) {
      return std::string(id->as_string());
    }
  }
  return fallback;
}

std::string FirstError(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) return d.ToString();
  }
  return diagnostics.empty() ? std::string("unknown error") : diagnostics.front().ToString();
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Sorted entries of a folder; a missing folder is reported once.
std::vector<fs::path> ListFolder(const fs::path& dir, bool want_dirs, std::vector<Diagnostic>& diagnostics,
                                 bool required) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (required)
      diagnostics.push_back({dir.string(), {}, "not a directory", Diagnostic::Severity::kError, "file-unreadable"});
    return out;
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (want_dirs ? it->is_directory(type_ec) : it->is_regular_file(type_ec)) {
      out.push_back(it->path());
    }
  }
  if (ec) {
    diagnostics.push_back(
        {dir.string(), {}, "cannot list: " + ec.message(), Diagnostic::Severity::kError, "file-unreadable"});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

namespace {

std::vector<fs::path> ListSkillFiles(const RegistryOptions& options, std::vector<Diagnostic>& diagnostics) {
  std::vector<fs::path> files;
  for (const auto& dir : ListFolder(options.skills_dir, true, diagnostics, true)) {
    fs::path file = dir / "skill.yaml";
    std::error_code ec;
    if (fs::exists(file, ec)) files.push_back(std::move(file));  // folders without one are not skills
  }
  return files;
}

std::vector<fs::path> ListRubricFiles(const RegistryOptions& options, std::vector<Diagnostic>& diagnostics) {
  std::vector<fs::path> files;
  for (auto& file : ListFolder(options.rubrics_dir, false, diagnostics, false)) {
    auto ext = file.extension();
    if (ext == ".yaml" || ext == ".yml") files.push_back(std::move(file));
  }
  return files;
}

}  // namespace

TreeFiles SkillRegistry::ListTree(const RegistryOptions& options, std::vector<Diagnostic>& diagnostics) {
  TreeFiles files;
  files.rubric_files = ListRubricFiles(options, diagnostics);
  files.skill_files = ListSkillFiles(options, diagnostics);
  return files;
}

void SkillRegistry::LoadRubrics(const std::vector<fs::path>& files, std::vector<Diagnostic>& diagnostics) {
  std::map<std::string, std::string> rubric_files;
  for (const auto& file : files) {
    auto rubric = LoadRubricFile(file.string());
    if (!rubric) {
      diagnostics.insert(diagnostics.end(), rubric.error().begin(), rubric.error().end());
      StampCode(diagnostics, diagnostics.size() - rubric.error().size(), "rubric-invalid");
      failed_rubrics_.emplace(IntendedId(file.string(), file.stem().string()), FirstError(rubric.error()));
      continue;
    }
    if (auto [it, fresh] = rubric_files.emplace(rubric->id, file.string()); !fresh) {
      diagnostics.push_back({file.string(),
                             {1, 1},
                             "duplicate rubric id \"" + rubric->id + "\" (also in " + it->second + ")",
                             Diagnostic::Severity::kError,
                             "duplicate-id"});
      continue;
    }
    rubrics_.push_back(std::make_shared<const Rubric>(std::move(*rubric)));
  }
  for (const auto& rubric : rubrics_) rubric_index_[rubric->id] = rubric;
}

// The checks that need the other files (rubrics, the config's routes), and
// the judges they allow. False when the skill cannot be registered.
bool SkillRegistry::LinkSkill(Skill& skill, const RegistryOptions& options, const std::string& file,
                              const ReviewerLookup& reviewers, std::vector<Diagnostic>& diagnostics) const {
  // Positions only for cross-file errors: the file is parsed again only then.
  std::optional<std::expected<YamlDocument, Diagnostic>> doc_positions;
  auto where = [&](const std::string& pointer) {
    if (!doc_positions) doc_positions = LoadYamlFile(file);
    return *doc_positions ? (*doc_positions)->positions.Find(pointer) : SourcePosition{};
  };
  bool ok = true;
  auto check_rubric = [&](const std::string& pointer, const std::string& id) {
    if (rubric_index_.contains(id)) return;
    if (auto why = FailedRubric(id)) {
      diagnostics.push_back({file, where(pointer), pointer + ": rubric \"" + id + "\" did not load: " + *why});
      ok = false;
      return;
    }
    std::string known;
    for (const auto& [rubric_id, unused] : rubric_index_) known += (known.empty() ? "" : ", ") + rubric_id;
    diagnostics.push_back({file, where(pointer),
                           pointer + ": unknown rubric \"" + id + "\" (rubrics in " + options.rubrics_dir.string() +
                               ": " + (known.empty() ? "none" : known) + ")"});
    ok = false;
  };
  if (skill.review && skill.review->skill.empty()) check_rubric("/review/rubric", skill.review->rubric);
  if (skill.template_type == TemplateType::kLlmReview) check_rubric("/rubric", skill.rubric);
  if (!ok) return false;
  if (skill.review && !skill.review->skill.empty()) return LinkGateSkill(skill, file, reviewers, where, diagnostics);
  if (skill.template_type == TemplateType::kLlmReview) {
    skill.judge =
        std::make_shared<const review::JudgeSpec>(JudgeForReviewSkill(skill, FindRubricShared(skill.rubric), config_));
  }
  if (skill.review) {
    auto gate = JudgeForGate(skill, config_, FindRubricShared(skill.review->rubric));
    if (!gate) {
      diagnostics.push_back(
          {file, where("/review"), "/review: " + gate.error().message, Diagnostic::Severity::kError, "skill-invalid"});
      return false;
    }
    skill.judge = std::make_shared<const review::JudgeSpec>(std::move(*gate));
  }
  return true;
}

// Skills load in two passes: every file first, then the checks across files
// (rubrics, review skills for gates, unique ids), review skills before the
// skills they gate. Each file's diagnostics stay together, in file order.
// A gate judged by an LLM_REVIEW skill: that skill's judge, named for the gate.
bool SkillRegistry::LinkGateSkill(Skill& skill, const std::string& file, const ReviewerLookup& reviewers,
                                  const std::function<SourcePosition(const std::string&)>& where,
                                  std::vector<Diagnostic>& diagnostics) const {
  ReviewGate& gate = *skill.review;
  auto reviewer = reviewers(gate.skill);
  if (!reviewer) {
    diagnostics.push_back({file, where("/review/skill"), "/review/skill: " + reviewer.error().message});
    return false;
  }
  review::JudgeSpec judge = *(*reviewer)->judge;
  judge.generation.skill_id = skill.id;
  judge.generation.task_id = skill.id + ".review";
  judge.generation.schema_name = generation::ResponseFormatName(judge.generation.task_id + "_verdict");
  gate.rubric = (*reviewer)->rubric;
  gate.model = (*reviewer)->model;
  gate.samples = judge.samples;
  skill.judge = std::make_shared<const review::JudgeSpec>(std::move(judge));
  return true;
}

// One skill file on its way into the registry.
struct SkillEntry {
  std::string file;
  std::optional<Skill> skill;  // empty: the file did not load
  std::vector<Diagnostic> diagnostics;
  std::string duplicate_of;
  bool ok = false;
};

namespace {

// The files of a tree's skills, in one set, and what the gates may ask of it.
struct SkillSet {
  std::vector<SkillEntry> entries;
  std::map<std::string, SkillEntry*, std::less<>> by_id;     // the first file of each id
  std::map<std::string, std::string, std::less<>> unloaded;  // id -> why, files that did not load
  std::vector<std::string> review_ids;

  void Index() {
    for (SkillEntry& entry : entries) {
      if (!entry.skill) {
        unloaded.emplace(IntendedId(entry.file, fs::path(entry.file).parent_path().filename().string()),
                         FirstError(entry.diagnostics));
        continue;
      }
      auto [it, fresh] = by_id.emplace(entry.skill->id, &entry);
      if (!fresh) entry.duplicate_of = it->second->file;
    }
    for (const auto& [id, entry] : by_id) {
      if (entry->skill->template_type == TemplateType::kLlmReview) review_ids.push_back(id);
    }
  }

  // The LLM_REVIEW skill `id`, linked, or why a gate cannot use it.
  Result<const Skill*> Reviewer(std::string_view id) const {
    auto it = by_id.find(id);
    if (auto failed = unloaded.find(id); it == by_id.end() && failed != unloaded.end()) {
      return Fail(ErrorCode::kConfigInvalid,
                  "the review skill \"" + std::string(id) + "\" did not load: " + failed->second);
    }
    if (it == by_id.end()) {
      return Fail(ErrorCode::kConfigInvalid, "unknown skill \"" + std::string(id) + "\"" +
                                                 DidYouMean(ClosestNames(id, review_ids)) +
                                                 " (LLM_REVIEW skills in this tree: " +
                                                 (review_ids.empty() ? std::string("none") : Joined(review_ids)) + ")");
    }
    if (it->second->skill->template_type != TemplateType::kLlmReview) {
      return Fail(ErrorCode::kConfigInvalid,
                  "skill \"" + std::string(id) + "\" is not an LLM_REVIEW skill, so it cannot judge");
    }
    if (!it->second->ok)
      return Fail(ErrorCode::kConfigInvalid, "the review skill \"" + std::string(id) + "\" did not load");
    return &*it->second->skill;
  }
};

}  // namespace

// Skills load in two passes: every file first, then the checks across files
// (rubrics, review skills for gates, unique ids), review skills before the
// skills they gate. Each file's diagnostics stay together, in file order.
void SkillRegistry::LoadSkills(const RegistryOptions& options, const std::vector<fs::path>& files,
                               std::vector<Diagnostic>& diagnostics) {
  SkillSet set;
  for (const auto& file : files) {
    SkillEntry& entry = set.entries.emplace_back();
    entry.file = file.string();
    auto skill = LoadSkillFile(entry.file, config_, options.is_known_handler, entry.diagnostics);
    if (skill) {
      entry.skill = std::move(*skill);
    } else {
      entry.diagnostics.insert(entry.diagnostics.end(), skill.error().begin(), skill.error().end());
    }
    StampCode(entry.diagnostics, 0, "skill-invalid");
  }
  set.Index();
  ReviewerLookup reviewers = [&set](std::string_view id) { return set.Reviewer(id); };
  for (bool review_pass : {true, false}) {
    for (SkillEntry& entry : set.entries) {
      if (!entry.skill || (entry.skill->template_type == TemplateType::kLlmReview) != review_pass) continue;
      const std::size_t before = entry.diagnostics.size();
      entry.ok =
          LinkSkill(*entry.skill, options, entry.file, reviewers, entry.diagnostics) && entry.duplicate_of.empty();
      if (entry.ok && entry.skill->rollout) {
        entry.ok = LinkRollout(*entry.skill, options, entry.file, reviewers, entry.diagnostics);
      }
      StampCode(entry.diagnostics, before, "reference-unknown");
    }
  }
  Register(set.entries, set.unloaded, diagnostics);
}

void SkillRegistry::Register(std::vector<SkillEntry>& entries,
                             std::map<std::string, std::string, std::less<>>& unloaded,
                             std::vector<Diagnostic>& diagnostics) {
  for (SkillEntry& entry : entries) {
    diagnostics.insert(diagnostics.end(), entry.diagnostics.begin(), entry.diagnostics.end());
    if (!entry.duplicate_of.empty()) {
      auto doc = LoadYamlFile(entry.file);
      diagnostics.push_back({entry.file, doc ? doc->positions.Find("/id") : SourcePosition{},
                             "/id: duplicate skill id \"" + entry.skill->id + "\" (also in " + entry.duplicate_of + ")",
                             Diagnostic::Severity::kError, "duplicate-id"});
    }
    if (entry.ok) {
      skills_.push_back(std::make_shared<const Skill>(std::move(*entry.skill)));
    } else if (entry.skill) {
      failed_skills_.emplace(entry.skill->id, FirstError(entry.diagnostics));
    }
  }
  for (auto& [id, why] : unloaded) failed_skills_.emplace(id, std::move(why));
  std::sort(skills_.begin(), skills_.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  for (const auto& skill : skills_) skill_index_[skill->id] = skill.get();
}

SkillRegistry::LoadResult SkillRegistry::Load(const RegistryOptions& options, Config config) {
  auto registry = std::make_shared<SkillRegistry>();
  std::vector<Diagnostic> diagnostics = config.warnings;
  registry->config_ = std::move(config);
  registry->LoadRubrics(ListRubricFiles(options, diagnostics), diagnostics);
  registry->LoadSkills(options, ListSkillFiles(options, diagnostics), diagnostics);
  return LoadResult{std::move(registry), std::move(diagnostics)};
}

SkillRegistry::LoadResult SkillRegistry::LoadFiles(const RegistryOptions& options, Config config,
                                                   const TreeFiles& files) {
  auto registry = std::make_shared<SkillRegistry>();
  std::vector<Diagnostic> diagnostics = config.warnings;
  registry->config_ = std::move(config);
  registry->LoadRubrics(files.rubric_files, diagnostics);
  registry->LoadSkills(options, files.skill_files, diagnostics);
  return LoadResult{std::move(registry), std::move(diagnostics)};
}

const Skill* SkillRegistry::FindSkill(std::string_view id) const {
  auto it = skill_index_.find(id);
  return it == skill_index_.end() ? nullptr : it->second;
}

const Rubric* SkillRegistry::FindRubric(std::string_view id) const { return FindRubricShared(id).get(); }

std::shared_ptr<const Rubric> SkillRegistry::FindRubricShared(std::string_view id) const {
  auto it = rubric_index_.find(id);
  return it == rubric_index_.end() ? nullptr : it->second;
}

std::optional<std::string> SkillRegistry::FailedSkill(std::string_view id) const {
  auto it = failed_skills_.find(id);
  return it == failed_skills_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::optional<std::string> SkillRegistry::FailedRubric(std::string_view id) const {
  auto it = failed_rubrics_.find(id);
  return it == failed_rubrics_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::vector<std::string> SkillRegistry::SimilarSkillIds(std::string_view id) const {
  std::vector<std::string> ids;
  for (const auto& skill : skills_) ids.push_back(skill->id);
  return ClosestNames(id, ids);
}

}  // namespace skillrunner
