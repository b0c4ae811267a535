#pragma once

// What the tree looks like to an MCP client (design.md §11.4, docs/mcp.md):
// each LLM_JSON_GENERATION and handler skill is a tool named by its id, its
// schemas as draft-07 without `$schema` and with local refs copied in place,
// both roots objects (a non-object input is {"input": ...}, a non-object
// output {"result": ...}); and a skill's answer as a tools/call result.
// Pure functions, no I/O.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "runner/tree/skill.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner::mcp {

// The protocol versions answered: the newest first. A client asking for any
// other (newer or unknown) gets the first.
inline constexpr std::string_view kProtocolVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};
// The version an initialize request asking for `requested` is answered with.
std::string_view NegotiatedVersion(std::string_view requested);
// Whether `version` has outputSchema and structuredContent (2025-06-18 on).
bool HasStructuredOutput(std::string_view version);

// Whether a skill is offered as a tool (generation and handler skills).
bool IsTool(const Skill& skill);
// Whether its schema's root is an object (no wrapping).
bool IsObjectRoot(const boost::json::value& schema);

// A schema as MCP clients validate it: no `$schema` or `$id`, each local
// `$ref` replaced by what it points at (its siblings kept over it), and
// `definitions`/`$defs` dropped once nothing points into them; a ref that
// recurses is left as it is, with what it needs.
boost::json::value ToolSchema(const boost::json::value& schema);

// {name, title, description, inputSchema, outputSchema?, annotations}.
boost::json::object ToolOf(const Skill& skill, bool with_output_schema);
// Every tool of the registry, in its order.
boost::json::array ToolsOf(const SkillRegistry& registry, bool with_output_schema);

// The skill's input from a tools/call's `arguments` (unwrapped from
// {"input": ...} when its root is not an object); null arguments are {}.
boost::json::value SkillInput(const Skill& skill, boost::json::value arguments);

// The tools/call result of an invocation's JSON-RPC answer (a result or an
// error, as the socket would answer it): the output as structuredContent
// (wrapped as {"result": ...} when its root is not an object; left out when
// `structured` is false) and as text content; a failure is isError with its
// code, message and attempts; `_meta` carries the metrics, the arm and a
// gate's review (a failed review is still isError false).
boost::json::object CallResult(const Skill& skill, const boost::json::object& answer, bool structured);

}  // namespace skillrunner::mcp
