#pragma once

#include <boost/json/array.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "runner/yaml_json.h"
#include "services/common/text.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner {

// A problem found while loading a file: "skills/foo/skill.yaml:7:3: message".
struct Diagnostic {
  enum class Severity { kError, kWarning };

  std::string file;
  SourcePosition position;
  std::string message;
  Severity severity = Severity::kError;

  // "file:line:col: message" (line/col omitted when unknown; "warning: "
  // before the message for warnings).
  std::string ToString() const;
};

bool HasErrors(const std::vector<Diagnostic>& diagnostics);

// [{file, line, col, pointer, severity: error|warning, message}] for JSON
// output; `pointer` is the JSON pointer a message starts with ("" if none).
boost::json::array DiagnosticsToJson(const std::vector<Diagnostic>& diagnostics);

// Parses `path` as YAML, or reports why not (unreadable file, syntax error).
// Skill, suite and schema files larger than this are refused.
inline constexpr std::uintmax_t kMaxYamlFileBytes = 16u << 20;
// A regular file read and parsed; a device, FIFO or directory, or a file over
// kMaxYamlFileBytes, is a Diagnostic saying so.
std::expected<YamlDocument, Diagnostic> LoadYamlFile(const std::string& path);
// The same for `text` already read from `path` (which only names it).
std::expected<YamlDocument, Diagnostic> ParseYamlText(const std::string& path, std::string_view text);

// Checks a loaded YAML document against one of the embedded schemas
// (EmbeddedSchema name) and returns one diagnostic per failure, placed at the
// failing value ("unexpected property" failures at the key).
std::vector<Diagnostic> CheckAgainstEmbeddedSchema(const YamlDocument& doc,
                                                   const std::string& file,
                                                   std::string_view schema_name);

// A nested checker's "/pointer: message" placed under `base` (the pointer of
// the checked value in the file); text without a leading pointer stays whole.
struct PlacedMessage {
  std::string pointer;
  std::string message;
};
PlacedMessage PlaceUnder(std::string base, std::string_view text);


// The embedded schema compiled once (throws std::logic_error if a shipped
// schema fails to compile: a build defect, not a user error).
const validation::CompiledSchema& EmbeddedCompiledSchema(std::string_view name);

}  // namespace skillrunner
