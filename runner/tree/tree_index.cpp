#include "runner/tree/tree_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <set>

namespace skillrunner {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// Bumped whenever the layout below changes.
constexpr std::int64_t kFormat = 1;

json::array StampsToJson(const std::vector<FileStamp>& stamps) {
  json::array out;
  out.reserve(stamps.size());
  for (const auto& s : stamps) out.push_back(json::array{json::string(s.path), s.size, s.mtime_ns});
  return out;
}

std::optional<std::vector<FileStamp>> StampsFromJson(const json::value* value) {
  if (value == nullptr || !value->is_array()) return std::nullopt;
  std::vector<FileStamp> out;
  out.reserve(value->as_array().size());
  for (const auto& item : value->as_array()) {
    const auto* a = item.if_array();
    if (!a || a->size() != 3 || !(*a)[0].is_string() || !(*a)[1].is_int64() || !(*a)[2].is_int64()) {
      return std::nullopt;
    }
    out.push_back({std::string((*a)[0].as_string()), (*a)[1].as_int64(), (*a)[2].as_int64()});
  }
  return out;
}

json::array PathsToJson(const std::vector<fs::path>& paths) {
  json::array out;
  for (const auto& p : paths) out.push_back(json::string(p.string()));
  return out;
}

std::optional<std::vector<fs::path>> PathsFromJson(const json::value* value) {
  if (value == nullptr || !value->is_array()) return std::nullopt;
  std::vector<fs::path> out;
  for (const auto& item : value->as_array()) {
    if (!item.is_string()) return std::nullopt;
    out.emplace_back(std::string(item.as_string()));
  }
  return out;
}

json::object DiagnosticToJson(const Diagnostic& d) {
  return {{"file", d.file},
          {"line", d.position.line},
          {"column", d.position.column},
          {"message", d.message},
          {"warning", d.severity == Diagnostic::Severity::kWarning},
          {"code", d.code},
          {"acknowledged", d.acknowledged}};
}

std::optional<Diagnostic> DiagnosticFromJson(const json::value& value) {
  const auto* o = value.if_object();
  if (!o) return std::nullopt;
  const auto *file = o->if_contains("file"), *line = o->if_contains("line"), *column = o->if_contains("column"),
             *message = o->if_contains("message"), *warning = o->if_contains("warning"), *code = o->if_contains("code"),
             *acknowledged = o->if_contains("acknowledged");
  if (!file || !file->is_string() || !line || !line->is_int64() || !column || !column->is_int64() || !message ||
      !message->is_string() || !warning || !warning->is_bool() || !code || !code->is_string() || !acknowledged ||
      !acknowledged->is_bool()) {
    return std::nullopt;
  }
  Diagnostic d(std::string(file->as_string()),
               SourcePosition{static_cast<int>(line->as_int64()), static_cast<int>(column->as_int64())},
               std::string(message->as_string()),
               warning->as_bool() ? Diagnostic::Severity::kWarning : Diagnostic::Severity::kError,
               std::string(code->as_string()));
  d.acknowledged = acknowledged->as_bool();
  return d;
}

// The files a skill's descriptor names besides its own: the schema files it
// names by path (read beside it), and a rollout's candidate with its own.
void AddSchemaFiles(const Skill& skill, std::set<std::string>& out) {
  const auto* descriptor = skill.descriptor.if_object();
  if (!descriptor) return;
  for (std::string_view key : {"input_schema", "output_schema"}) {
    const auto* value = descriptor->if_contains(key);
    if (value && value->is_string()) out.insert((skill.dir / std::string(value->as_string())).string());
  }
  if (skill.candidate) {
    out.insert(skill.candidate->file.string());
    AddSchemaFiles(*skill.candidate, out);
  }
}

// The files a load of `skill` alone needs: its own, its gate's review skill,
// and the rubrics either judges with.
TreeFiles NeedsOf(const Skill& skill, const SkillRegistry& registry) {
  std::set<fs::path> skills{skill.file}, rubrics;
  auto add_rubric = [&](const std::string& id) {
    if (const Rubric* rubric = registry.FindRubric(id)) rubrics.insert(rubric->file);
  };
  if (skill.template_type == TemplateType::kLlmReview) add_rubric(skill.rubric);
  auto add_judge = [&](const std::string& reviewer_id, const std::string& rubric) {
    if (!reviewer_id.empty()) {
      if (const Skill* reviewer = registry.FindSkill(reviewer_id)) skills.insert(reviewer->file);
    }
    add_rubric(rubric);  // a gate by skill: that skill's rubric, filled in at load
  };
  for (const Skill* version : {&skill, skill.candidate.get()}) {
    if (version && version->review) add_judge(version->review->skill, version->review->rubric);
  }
  if (skill.rollout && skill.rollout->review) add_judge(skill.rollout->review->skill, skill.rollout->review->rubric);
  return TreeFiles{{skills.begin(), skills.end()}, {rubrics.begin(), rubrics.end()}};
}

// The stamps of `paths`, or nullopt when one cannot be stat'ed or is not
// older than `before_ns`.
std::optional<std::vector<FileStamp>> StampAll(const std::vector<std::string>& paths, std::int64_t before_ns) {
  std::vector<FileStamp> out;
  out.reserve(paths.size());
  for (const auto& path : paths) {
    auto stamp = StampOf(path);
    if (!stamp || stamp->mtime_ns >= before_ns) return std::nullopt;
    out.push_back(std::move(*stamp));
  }
  return out;
}

// Path strings sorted as strings: the order of the index's lists.
std::vector<std::string> Strings(const std::vector<fs::path>& paths) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const auto& p : paths) out.push_back(p.string());
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t MtimeNs(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// The files of `dir` that SkillRegistry::ListTree would list, stamped, sorted
// by path: with `skill_folders`, `ENTRY/skill.yaml` of each entry (a folder
// or a link to one) that has one; else the regular `*.yaml|*.yml` files.
// One stat per file, relative to the open folder (this runs on every `run`).
// Nullopt when a folder that must be listed cannot be.
std::optional<std::vector<FileStamp>> StampListing(const fs::path& dir, bool skill_folders) {
  std::vector<FileStamp> out;
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) {
    if (!skill_folders && (errno == ENOENT || errno == ENOTDIR)) return out;  // rubrics are optional
    return std::nullopt;
  }
  const int fd = ::dirfd(stream);
  // `dir / name` as text, without building a path per entry (names hold no '/').
  std::string prefix = (dir / "x").string();
  prefix.pop_back();
  while (const dirent* entry = ::readdir(stream)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (skill_folders && entry->d_type != DT_DIR && entry->d_type != DT_LNK && entry->d_type != DT_UNKNOWN) continue;
    if (!skill_folders) {
      const fs::path extension = fs::path(name).extension();
      if (extension != ".yaml" && extension != ".yml") continue;
    }
    const std::string rel = skill_folders ? name + "/skill.yaml" : name;
    struct stat st {};
    if (::fstatat(fd, rel.c_str(), &st, 0) != 0 || (!skill_folders && !S_ISREG(st.st_mode))) continue;
    out.push_back({prefix + rel, static_cast<std::int64_t>(st.st_size), MtimeNs(st)});
  }
  ::closedir(stream);
  std::sort(out.begin(), out.end(), [](const FileStamp& a, const FileStamp& b) { return a.path < b.path; });
  return out;
}

// "" when `now` are the files of `then` with the same stamps.
std::string CompareStamps(const std::vector<FileStamp>& then, const std::vector<FileStamp>& now) {
  if (then.size() != now.size()) return "the number of files changed";
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (then[i].path != now[i].path) return now[i].path + " came or went";
    if (then[i] != now[i]) return now[i].path + " changed";
  }
  return "";
}

}  // namespace

std::int64_t CoarseNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::optional<FileStamp> StampOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{path, static_cast<std::int64_t>(st.st_size), MtimeNs(st)};
}

std::optional<TreeIndex> IndexTree(const RegistryOptions& options, const SkillRegistry::LoadResult& loaded,
                                   std::string identity, std::int64_t load_started_ns) {
  if (HasErrors(loaded.diagnostics)) return std::nullopt;
  std::vector<Diagnostic> listing;
  TreeFiles files = SkillRegistry::ListTree(options, listing);
  if (!listing.empty()) return std::nullopt;
  TreeIndex index;
  index.identity = std::move(identity);
  index.diagnostics = loaded.diagnostics;
  std::set<std::string> schema_files;
  for (const auto& skill : loaded.registry->skills()) {
    index.needs.emplace(skill->id, NeedsOf(*skill, *loaded.registry));
    AddSchemaFiles(*skill, schema_files);
  }
  auto skills = StampAll(Strings(files.skill_files), load_started_ns);
  auto rubrics = StampAll(Strings(files.rubric_files), load_started_ns);
  auto others = StampAll({schema_files.begin(), schema_files.end()}, load_started_ns);
  if (!skills || !rubrics || !others) return std::nullopt;
  index.skill_files = std::move(*skills);
  index.rubric_files = std::move(*rubrics);
  index.other_files = std::move(*others);
  return index;
}

std::string TreeIndexToJson(const TreeIndex& index) {
  json::object needs;
  for (const auto& [id, files] : index.needs) {
    needs[id] = json::array{PathsToJson(files.skill_files), PathsToJson(files.rubric_files)};
  }
  json::array diagnostics;
  for (const auto& d : index.diagnostics) diagnostics.push_back(DiagnosticToJson(d));
  json::object root{{"format", kFormat},
                    {"identity", index.identity},
                    {"skill_files", StampsToJson(index.skill_files)},
                    {"rubric_files", StampsToJson(index.rubric_files)},
                    {"other_files", StampsToJson(index.other_files)},
                    {"needs", std::move(needs)},
                    {"diagnostics", std::move(diagnostics)}};
  return json::serialize(root);
}

std::optional<TreeIndex> TreeIndexFromJson(std::string_view text) {
  std::error_code ec;
  json::value value = json::parse(text, ec);
  const auto* root = ec ? nullptr : value.if_object();
  if (!root) return std::nullopt;
  const auto *format = root->if_contains("format"), *identity = root->if_contains("identity"),
             *needs = root->if_contains("needs"), *diagnostics = root->if_contains("diagnostics");
  if (!format || !format->is_int64() || format->as_int64() != kFormat || !identity || !identity->is_string() ||
      !needs || !needs->is_object() || !diagnostics || !diagnostics->is_array()) {
    return std::nullopt;
  }
  TreeIndex index;
  index.identity = std::string(identity->as_string());
  auto skills = StampsFromJson(root->if_contains("skill_files"));
  auto rubrics = StampsFromJson(root->if_contains("rubric_files"));
  auto others = StampsFromJson(root->if_contains("other_files"));
  if (!skills || !rubrics || !others) return std::nullopt;
  index.skill_files = std::move(*skills);
  index.rubric_files = std::move(*rubrics);
  index.other_files = std::move(*others);
  for (const auto& [id, files] : needs->as_object()) {
    const auto* pair = files.if_array();
    if (!pair || pair->size() != 2) return std::nullopt;
    auto skill_files = PathsFromJson(&(*pair)[0]);
    auto rubric_files = PathsFromJson(&(*pair)[1]);
    if (!skill_files || !rubric_files) return std::nullopt;
    index.needs.emplace(std::string(id), TreeFiles{std::move(*skill_files), std::move(*rubric_files)});
  }
  for (const auto& item : diagnostics->as_array()) {
    auto d = DiagnosticFromJson(item);
    if (!d) return std::nullopt;
    index.diagnostics.push_back(std::move(*d));
  }
  return index;
}

std::string TreeChange(const TreeIndex& index, const RegistryOptions& options) {
  auto skills = StampListing(options.skills_dir, true);
  if (!skills) return "cannot list " + options.skills_dir.string();
  if (auto why = CompareStamps(index.skill_files, *skills); !why.empty()) return why;
  auto rubrics = StampListing(options.rubrics_dir, false);
  if (!rubrics) return "cannot list " + options.rubrics_dir.string();
  if (auto why = CompareStamps(index.rubric_files, *rubrics); !why.empty()) return why;
  for (const auto& then : index.other_files) {
    auto now = StampOf(then.path);
    if (!now || *now != then) return then.path + " changed";
  }
  return "";
}

std::optional<SkillRegistry::LoadResult> LoadFromIndex(const TreeIndex& index, const RegistryOptions& options,
                                                       Config config, std::string_view id) {
  auto needs = index.needs.find(id);
  if (needs == index.needs.end()) return std::nullopt;
  auto loaded = SkillRegistry::LoadFiles(options, std::move(config), needs->second);
  if (HasErrors(loaded.diagnostics) || loaded.registry->FindSkill(id) == nullptr) return std::nullopt;
  loaded.diagnostics = index.diagnostics;
  return loaded;
}

}  // namespace skillrunner
