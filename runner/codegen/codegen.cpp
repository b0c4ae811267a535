#include "runner/codegen/codegen.h"

#include <cctype>
#include <map>
#include <set>

namespace skillrunner::codegen {

namespace {

bool IsIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

const std::set<std::string>& PythonKeywords() {
  static const std::set<std::string> words = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                              "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                              "else",   "except", "finally", "for",      "from",     "global", "if",
                                              "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                              "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
  return words;
}

const std::set<std::string>& TypeScriptReserved() {
  static const std::set<std::string> words = {
      "await",     "break",  "case",     "catch",  "class",      "const",   "continue",  "debugger",
      "default",   "delete", "do",       "else",   "enum",       "export",  "extends",   "false",
      "finally",   "for",    "function", "if",     "implements", "import",  "in",        "instanceof",
      "interface", "let",    "new",      "null",   "package",    "private", "protected", "public",
      "return",    "static", "super",    "switch", "this",       "throw",   "true",      "try",
      "typeof",    "var",    "void",     "while",  "with",       "yield"};
  return words;
}

// Each function name to the skill id that takes it; the second id is an error.
Result<void> CheckNames(Language language, const std::vector<std::shared_ptr<const Skill>>& skills) {
  std::map<std::string, std::string> owner;
  const char* word = language == Language::kPython ? "python" : "typescript";
  for (const auto& skill : skills) {
    std::vector<std::string> names;
    if (language == Language::kPython) {
      names = {PythonFunctionName(skill->id), PythonFunctionName(skill->id) + "_async"};
    } else {
      names = {TypeScriptFunctionName(skill->id)};
    }
    for (const auto& name : names) {
      auto [it, inserted] = owner.emplace(name, skill->id);
      if (!inserted && it->second != skill->id) {
        return Fail(ErrorCode::kConfigInvalid, "skills \"" + it->second + "\" and \"" + skill->id +
                                                   "\" both become the " + word + " function " + name +
                                                   "; rename one of them");
      }
    }
  }
  return {};
}

}  // namespace

std::string PythonFunctionName(const std::string& id) {
  std::string name = id;
  for (char& c : name) {
    if (c == '.' || c == '-') c = '_';
  }
  if (!IsIdentifier(name) || PythonKeywords().contains(name)) name = "s_" + name;
  return name;
}

std::string TypeScriptFunctionName(const std::string& id) {
  std::string name;
  for (std::string word : SplitId(id)) {
    if (!name.empty()) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
    name += word;
  }
  if (!IsIdentifier(name) || TypeScriptReserved().contains(name)) name = "s_" + name;
  return name;
}

Result<GeneratedFile> Generate(Language language, const std::vector<std::shared_ptr<const Skill>>& skills) {
  if (auto names = CheckNames(language, skills); !names) return std::unexpected(std::move(names.error()));
  std::set<std::string> taken;
  std::vector<SkillTypes> types;
  for (const auto& skill : skills) types.push_back(BuildSkillTypes(*skill, PascalName(skill->id), taken));
  if (language == Language::kPython) return GeneratedFile{"skillrunner_skills.py", RenderPython(types)};
  return GeneratedFile{"skills.ts", RenderTypeScript(types)};
}

}  // namespace skillrunner::codegen
