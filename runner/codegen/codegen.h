#pragma once

// `skillrunner codegen python|typescript`: one typed function per skill, with
// input and output types generated from its JSON Schemas, for the client
// libraries in clients/ (design.md §10.4). Each function passes the skill's
// schema_hash, so the client checks on its first call that the server's
// skill still has the schemas the code was generated from.

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "runner/codegen/type_model.h"
#include "services/common/error.h"

namespace skillrunner::codegen {

enum class Language { kPython, kTypeScript };

struct GeneratedFile {
  std::string name;  // skillrunner_skills.py or skills.ts
  std::string text;
};

// The file for `skills` (sorted by id). Fails (CONFIG_INVALID), naming both
// ids, when two ids give one function name.
Result<GeneratedFile> Generate(Language language, const std::vector<std::shared_ptr<const Skill>>& skills);

// The function a skill id becomes: Python "triage_ticket" (`.` and `-` become
// `_`), TypeScript "triageTicket"; an id that is not an identifier, or a
// keyword, gets "s_" in front.
std::string PythonFunctionName(const std::string& id);
std::string TypeScriptFunctionName(const std::string& id);

// The languages' halves (python_codegen.cpp, typescript_codegen.cpp).
std::string RenderPython(const std::vector<SkillTypes>& skills);
std::string RenderTypeScript(const std::vector<SkillTypes>& skills);

}  // namespace skillrunner::codegen
