#pragma once

// What `skillrunner codegen` makes of a skill's JSON Schemas before it writes
// any language: named object types with their fields, and type expressions
// over them. One model, two renderers (python_codegen, typescript_codegen).

#include <boost/json/value.hpp>
#include <set>
#include <string>
#include <vector>

#include "runner/tree/skill.h"

namespace skillrunner::codegen {

enum class TypeKind { kAny, kString, kInteger, kNumber, kBoolean, kNull, kLiterals, kArray, kMap, kObject, kUnion };

// A type expression. kLiterals: `literals` (an enum or const); kArray and
// kMap: members[0] is the item or value type; kUnion: each member;
// kObject: `object` names an ObjectType.
struct TypeRef {
  TypeKind kind = TypeKind::kAny;
  std::vector<boost::json::value> literals;
  std::vector<TypeRef> members;
  std::string object;
};

struct Field {
  std::string name;  // the property as written (may not be an identifier)
  TypeRef type;
  bool required = false;
  std::string description;
};

struct ObjectType {
  std::string name;
  std::string description;
  std::vector<Field> fields;
};

// One skill's types. `objects` are in dependency order: a nested object comes
// before the one that holds it.
struct SkillTypes {
  const Skill* skill = nullptr;
  std::string schema_hash;  // "sha256:<hex>", as skills.list reports it
  std::string input_name;   // the root types' names: <Pascal id>Input / Output
  std::string output_name;
  TypeRef input;
  TypeRef output;
  std::vector<ObjectType> objects;
};

// The types of `skill`, named from `pascal_name` ("TriageTicket"). Type names
// already in `taken` get a number (TriageTicketOutputItem2); new ones are added.
// `$ref`s within the schema are followed; a cycle or an unknown keyword
// becomes kAny.
SkillTypes BuildSkillTypes(const Skill& skill, const std::string& pascal_name, std::set<std::string>& taken);

// What a type's doc comment says: its schema's description, else "The input
// of skill S." (or output), else "Part of skill S's schemas."
std::string TypeDescription(const ObjectType& object, const SkillTypes& types);

// What a skill's stub function's doc comment says: the skill's description (else "Invoke skill S."), its
// id, version and template type, and that the stub `fails` ("Raises", "Rejects with") SchemaChangedError
// when the server's skill no longer has these schemas, and ReviewFailedError when a gated skill's review
// failed the answer unless called with `allow` (the option that returns it).
std::string FunctionDescription(const SkillTypes& types, const std::string& fails, const std::string& allow);

// Words of an id split on `_`, `.` and `-` (empty parts dropped).
std::vector<std::string> SplitId(const std::string& id);
// "triage_ticket" -> "TriageTicket" (any character but a letter or digit
// separates words); one that would start with a digit, or be None, True or
// False, gets "S" in front.
std::string PascalName(const std::string& id);

}  // namespace skillrunner::codegen
