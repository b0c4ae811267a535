#include "runner/importer/imported_tree.h"

#include <yaml-cpp/yaml.h>

#include <boost/json/serialize.hpp>
#include <cctype>
#include <charconv>
#include <fstream>
#include <system_error>

namespace skillrunner::importer {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

// Whether a plain YAML scalar would read back as something other than this string.
bool NeedsQuotes(std::string_view text) {
  if (text.empty()) return true;
  static const char* kWords[] = {"true", "false", "null", "~", "yes", "no", "on", "off", "True", "False", "Null"};
  for (const char* word : kWords) {
    if (text == word) return true;
  }
  const char first = text.front();
  if (std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' || first == '.') return true;
  return false;
}

// A number or boolean as YAML writes it: a double in its shortest form (0.01, 1), not Boost.JSON's 1E-2.
std::string Scalar(const json::value& value) {
  if (!value.is_double()) return json::serialize(value);
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value.as_double());
  return ec == std::errc() ? std::string(text, end) : json::serialize(value);
}

void Emit(YAML::Emitter& out, const json::value& value) {
  switch (value.kind()) {
    case json::kind::object:
      out << YAML::BeginMap;
      for (const auto& [key, member] : value.as_object()) {
        out << YAML::Key << std::string(key) << YAML::Value;
        Emit(out, member);
      }
      out << YAML::EndMap;
      return;
    case json::kind::array:
      out << YAML::BeginSeq;
      for (const auto& item : value.as_array()) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case json::kind::string: {
      const std::string text(value.as_string());
      if (text.find('\n') != std::string::npos) {
        out << YAML::Literal << text;
      } else if (NeedsQuotes(text)) {
        out << YAML::DoubleQuoted << text;
      } else {
        out << text;
      }
      return;
    }
    case json::kind::null:
      out << YAML::Null;
      return;
    default:
      out << Scalar(value);
  }
}

Result<void> WriteFile(const fs::path& file, const std::string& text) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Fail(ErrorCode::kInternal, "cannot write " + file.string());
  return {};
}

std::string Jsonl(const std::vector<json::object>& cases) {
  std::string text;
  for (const auto& c : cases) text += json::serialize(c) + "\n";
  return text;
}

std::string Header(const ImportedTree& tree, std::string_view what) {
  return "# " + std::string(what) + ", imported by `skillrunner import` from " + tree.source +
         " (import-report.md says what did not carry over).\n";
}

}  // namespace

std::string MakeId(std::string_view text) {
  std::string id;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.') {
      id.push_back(static_cast<char>(std::tolower(u)));
    } else if (!id.empty() && id.back() != '_') {
      id.push_back('_');
    }
  }
  while (!id.empty() && (id.back() == '_' || id.back() == '.')) id.pop_back();
  if (id.size() > 128) id.resize(128);
  return id.empty() ? "imported" : id;
}

std::string ToYaml(const json::value& value) {
  YAML::Emitter out;
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string ReportMarkdown(const ImportedTree& tree) {
  std::string md = "# Import report\n\nFrom " + tree.source + ": " + std::to_string(tree.skills.size()) + " skill(s), ";
  std::size_t cases = 0;
  for (const auto& [skill, list] : tree.cases) cases += list.size();
  md += std::to_string(cases) + " case(s), " + std::to_string(tree.rubrics.size()) + " rubric(s), " +
        std::to_string(tree.carried_assertions) + " assertion(s) carried over as checks or criteria.\n";
  md += "Run it: `skillrunner --provider simulated eval evals/" + tree.name + ".yaml --out out/" + tree.name + "`.\n\n";
  if (tree.not_carried.empty()) return md + "Everything was carried over.\n";
  std::map<std::string, std::size_t> by_kind;
  for (const auto& item : tree.not_carried) ++by_kind[item.kind];
  md += "## Not carried over (" + std::to_string(tree.not_carried.size()) + ")\n\n| kind | count |\n|---|---:|\n";
  for (const auto& [kind, count] : by_kind) md += "| " + kind + " | " + std::to_string(count) + " |\n";
  md += "\n## Where\n\n";
  for (const auto& item : tree.not_carried) {
    md += "- `" + item.where + "`: " + item.kind + (item.instead.empty() ? "" : "; " + item.instead) + "\n";
  }
  return md;
}

Result<void> WriteTree(const ImportedTree& tree, const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !force) {
    return Fail(ErrorCode::kConfigInvalid, dir.string() + " exists and is not empty: give another --out, or --force");
  }
  std::vector<std::pair<fs::path, std::string>> files;
  files.emplace_back(dir / "skillrunner.yaml", Header(tree, "The config") + ToYaml(tree.config));
  for (const auto& [id, skill] : tree.skills) {
    files.emplace_back(dir / "skills" / id / "skill.yaml", Header(tree, "A skill") + ToYaml(skill));
    if (auto it = tree.cases.find(id); it != tree.cases.end()) {
      files.emplace_back(dir / "skills" / id / "cases.jsonl", Jsonl(it->second));
    }
  }
  for (const auto& [id, rubric] : tree.rubrics) {
    files.emplace_back(dir / "rubrics" / (id + ".yaml"), Header(tree, "A rubric") + ToYaml(rubric));
  }
  files.emplace_back(dir / "evals" / (tree.name + ".yaml"), Header(tree, "The suite") + ToYaml(tree.suite));
  for (const auto& [path, text] : tree.files) files.emplace_back(dir / path, text);
  files.emplace_back(dir / "import-report.md", ReportMarkdown(tree));
  for (const auto& [file, text] : files) {
    if (auto written = WriteFile(file, text); !written) return written;
  }
  return {};
}

}  // namespace skillrunner::importer
