// `skillrunner codegen python`: TypedDicts (Literal enums, NotRequired for
// optional properties) and a sync and an async function per skill, for the
// skillrunner_client package. Checked by mypy --strict in the client tests.

#include <cmath>
#include <set>
#include <sstream>

#include "runner/codegen/codegen.h"
#include "services/common/json_text.h"

namespace skillrunner::codegen {
namespace json = boost::json;

namespace {

// The typing names a file uses, imported and nothing more.
// Also the type being written: a reference to it inside itself is quoted (a
// forward reference: the class does not exist yet while its body runs).
struct Imports {
  std::set<std::string> typing;
  std::string writing;
};

std::string PyString(std::string_view text) { return CompactJson(json::string(text)); }

bool IsPyIdentifier(const std::string& name) {
  return PythonFunctionName(name) == name;  // an identifier, not a keyword
}

// A Literal member, or nullopt for a value Literal cannot hold (a fraction).
std::optional<std::string> PyLiteral(const json::value& value) {
  if (value.is_string()) return PyString(value.get_string());
  if (value.is_bool()) return value.get_bool() ? "True" : "False";
  if (value.is_null()) return "None";
  if (value.is_int64() || value.is_uint64()) return CompactJson(value);
  if (value.is_double() && std::trunc(value.get_double()) == value.get_double() &&
      std::abs(value.get_double()) < 1e15) {
    return std::to_string(static_cast<long long>(value.get_double()));
  }
  return std::nullopt;
}

std::string PyType(const TypeRef& type, Imports& imports);

std::string PyUnion(const std::vector<std::string>& members, Imports& imports) {
  std::vector<std::string> unique;
  for (const auto& member : members) {
    if (member == "Any") {
      imports.typing.insert("Any");
      return "Any";
    }
    if (std::find(unique.begin(), unique.end(), member) == unique.end()) unique.push_back(member);
  }
  std::string text;
  for (const auto& member : unique) text += (text.empty() ? "" : " | ") + member;
  return text;
}

std::string PyLiterals(const std::vector<json::value>& values, Imports& imports) {
  std::string members;
  for (const auto& value : values) {
    auto literal = PyLiteral(value);
    if (!literal) {
      imports.typing.insert("Any");
      return "Any";
    }
    members += (members.empty() ? "" : ", ") + *literal;
  }
  imports.typing.insert("Literal");
  return "Literal[" + members + "]";
}

std::string PyType(const TypeRef& type, Imports& imports) {
  switch (type.kind) {
    case TypeKind::kString:
      return "str";
    case TypeKind::kInteger:
      return "int";
    case TypeKind::kNumber:
      return "float";
    case TypeKind::kBoolean:
      return "bool";
    case TypeKind::kNull:
      return "None";
    case TypeKind::kLiterals:
      return PyLiterals(type.literals, imports);
    case TypeKind::kArray:
      return "list[" + PyType(type.members.at(0), imports) + "]";
    case TypeKind::kMap:
      return "dict[str, " + PyType(type.members.at(0), imports) + "]";
    case TypeKind::kObject:
      return type.object == imports.writing ? PyString(type.object) : type.object;
    case TypeKind::kUnion: {
      std::vector<std::string> members;
      for (const auto& member : type.members) members.push_back(PyType(member, imports));
      return PyUnion(members, imports);
    }
    case TypeKind::kAny:
      break;
  }
  imports.typing.insert("Any");
  return "Any";
}

// A docstring body: backslashes and triple quotes cannot end it early.
std::string PyDocText(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\')
      escaped += "\\\\";
    else if (c == '"')
      escaped += "\\\"";
    else
      escaped.push_back(c);
  }
  while (!escaped.empty() && (escaped.back() == '\n' || escaped.back() == ' ')) escaped.pop_back();
  return escaped;
}

void PyDocstring(std::ostringstream& out, const std::string& text, const std::string& indent) {
  std::string body = PyDocText(text);
  std::string indented;
  for (std::size_t i = 0; i < body.size(); ++i) {
    indented.push_back(body[i]);
    if (body[i] == '\n' && i + 1 < body.size() && body[i + 1] != '\n') indented += indent;
  }
  out << indent << "\"\"\"" << indented << (body.find('\n') != std::string::npos ? "\n" + indent : "") << "\"\"\"\n";
}

void PyComment(std::ostringstream& out, const std::string& text, const std::string& indent) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out << indent << "# " << line << "\n";
}

std::string FieldType(const Field& field, Imports& imports) {
  std::string type = PyType(field.type, imports);
  if (field.required) return type;
  imports.typing.insert("NotRequired");
  return "NotRequired[" + type + "]";
}

// Class syntax where every property is an identifier; the functional form otherwise.
void PyObject(std::ostringstream& out, const ObjectType& object, const std::string& doc, Imports& imports) {
  imports.typing.insert("TypedDict");
  imports.writing = object.name;
  bool identifiers = true;
  for (const auto& field : object.fields) identifiers = identifiers && IsPyIdentifier(field.name);
  if (!identifiers) {
    PyComment(out, doc, "");
    out << object.name << " = TypedDict(\n    " << PyString(object.name) << ",\n    {\n";
    for (const auto& field : object.fields) {
      PyComment(out, field.description, "        ");
      out << "        " << PyString(field.name) << ": " << FieldType(field, imports) << ",\n";
    }
    out << "    },\n)\n\n\n";
    imports.writing.clear();
    return;
  }
  out << "class " << object.name << "(TypedDict):\n";
  PyDocstring(out, doc, "    ");
  if (!object.fields.empty()) out << "\n";
  for (const auto& field : object.fields) {
    PyComment(out, field.description, "    ");
    out << "    " << field.name << ": " << FieldType(field, imports) << "\n";
  }
  out << "\n\n";
  imports.writing.clear();
}

void PyAlias(std::ostringstream& out, const std::string& name, const TypeRef& type, Imports& imports) {
  if (type.kind == TypeKind::kObject && type.object == name) return;
  imports.typing.insert("TypeAlias");
  out << name << ": TypeAlias = " << PyType(type, imports) << "\n\n\n";
}

void PyFunctions(std::ostringstream& out, const SkillTypes& types) {
  const Skill& skill = *types.skill;
  const std::string name = PythonFunctionName(skill.id);
  const std::string doc = FunctionDescription(types, "Raises", "allow_review_failure=True");
  for (bool async : {false, true}) {
    out << (async ? "async def " : "def ") << name << (async ? "_async" : "")
        << "(\n    client: " << (async ? "AsyncClient" : "Client") << ",\n    input: " << types.input_name
        << ",\n    *,\n    timeout_ms: int | None = None,\n    allow_review_failure: bool = False,\n) -> "
        << types.output_name << ":\n";
    PyDocstring(out, doc, "    ");
    out << "    result = " << (async ? "await " : "") << "client.invoke(\n        " << PyString(skill.id)
        << ",\n        input,\n        timeout_ms=timeout_ms,\n        schema_hash=SCHEMA_HASHES[" << PyString(skill.id)
        << "],\n        skill_version=SKILL_VERSIONS[" << PyString(skill.id) << "],\n    )\n";
    out << "    if not allow_review_failure:\n        result.raise_for_review()\n";
    out << "    return cast(" << types.output_name << ", result.output)\n\n\n";
  }
}

void PyHeader(std::ostringstream& out, const std::vector<SkillTypes>& skills, const Imports& imports) {
  out << "# Generated by `skillrunner codegen python`: do not edit; run it again after a skill changes.\n"
      << "\"\"\"Typed functions for the skills of one skillrunner tree.\n\n"
      << "Each function calls its skill through a skillrunner_client Client (or AsyncClient for the\n"
      << "_async ones) and checks, on its first call on a connection and after each skills.changed, that\n"
      << "the server's skill still has the schemas this file was generated from (SCHEMA_HASHES) or a\n"
      << "compatible change of them at the same version (SKILL_VERSIONS).\n\"\"\"\n\n";
  std::set<std::string> typing = imports.typing;
  typing.insert("cast");
  std::string names;
  for (const auto& name : typing) names += (names.empty() ? "" : ", ") + name;
  out << "from typing import " << names << "\n\nfrom skillrunner_client import AsyncClient, Client\n\n";
  out << "SCHEMA_HASHES: dict[str, str] = {\n";
  for (const auto& types : skills)
    out << "    " << PyString(types.skill->id) << ": " << PyString(types.schema_hash) << ",\n";
  out << "}\n\nSKILL_VERSIONS: dict[str, int] = {\n";
  for (const auto& types : skills) out << "    " << PyString(types.skill->id) << ": " << types.skill->version << ",\n";
  out << "}\n\n\n";
}

}  // namespace

std::string RenderPython(const std::vector<SkillTypes>& skills) {
  Imports imports;
  std::ostringstream body;
  std::vector<std::string> exported{"SCHEMA_HASHES"};
  for (const auto& types : skills) {
    for (const auto& object : types.objects) {
      PyObject(body, object, TypeDescription(object, types), imports);
      exported.push_back(object.name);
    }
    PyAlias(body, types.input_name, types.input, imports);
    PyAlias(body, types.output_name, types.output, imports);
    for (const auto& name : {types.input_name, types.output_name}) {
      if (std::find(exported.begin(), exported.end(), name) == exported.end()) exported.push_back(name);
    }
    PyFunctions(body, types);
    exported.push_back(PythonFunctionName(types.skill->id));
    exported.push_back(PythonFunctionName(types.skill->id) + "_async");
  }
  std::ostringstream out;
  PyHeader(out, skills, imports);
  out << body.str() << "__all__ = [\n";
  for (const auto& name : exported) out << "    " << PyString(name) << ",\n";
  out << "]\n";
  return out.str();
}

}  // namespace skillrunner::codegen
