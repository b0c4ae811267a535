#pragma once

#include <boost/json/array.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "runner/tree/yaml_json.h"
#include "services/common/text.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner {

// A problem found while loading a file: "skills/foo/skill.yaml:7:3: message".
struct Diagnostic {
  enum class Severity { kError, kWarning };

  Diagnostic() = default;
  Diagnostic(std::string file, SourcePosition position, std::string message, Severity severity = Severity::kError,
             std::string code = {})
      : file(std::move(file)),
        position(position),
        message(std::move(message)),
        severity(severity),
        code(std::move(code)) {}

  std::string file;
  SourcePosition position;
  std::string message;
  Severity severity = Severity::kError;
  // The stable slug of the problem (runner/tree/lint_codes.h), e.g. "keyword-typo".
  std::string code;
  // A warning whose code the skill's `lint: {allow}` or `validate --allow`
  // acknowledges: listed by `validate --json`, not printed, never fails --strict.
  bool acknowledged = false;

  // "file:line:col: message" (line/col omitted when unknown; "warning: "
  // before the message and " [code]" after it for warnings).
  std::string ToString() const;
};

bool HasErrors(const std::vector<Diagnostic>& diagnostics);

// Gives `code` to each diagnostic from index `from` on that has none yet.
void StampCode(std::vector<Diagnostic>& diagnostics, std::size_t from, std::string_view code);

// [{file, line, col, pointer, severity: error|warning, code, allowed,
// message}] for JSON output; `pointer` is the JSON pointer a message starts
// with ("" if none); `allowed` is true for an acknowledged warning.
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
std::vector<Diagnostic> CheckAgainstEmbeddedSchema(const YamlDocument& doc, const std::string& file,
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
