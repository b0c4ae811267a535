#pragma once

// Internals of strict_schema.cpp and its parts (keywords, limits, map-back).
// Not part of the public API.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/common/error.h"
#include "services/common/json_pointer.h"
#include "services/common/utf8.h"
#include "services/generation/strict_schema.h"

namespace skillrunner::generation::strict_detail {

namespace json = boost::json;

inline constexpr int kMaxSchemaDepth = 64;  // recursion guard for user input
inline constexpr int kMaxInlines = 1000;    // $ref expansions per schema
inline constexpr int kMaxRefHops = 32;

// The pointer as shown in messages: "" -> "(root)".
std::string Where(std::string_view pointer);
// Compact JSON, cut to about 80 bytes with "…".
std::string ValueText(const json::value& value);
// The schema a local ref ("#", "#/definitions/a", "#/properties/x%20y")
// points at inside `root`; nullptr when it is not local or does not resolve.
const json::value* ResolveLocalRef(const json::value& root, std::string_view ref);
// Whether null could be valid against `schema` (type, enum, const, $ref,
// anyOf/oneOf/allOf looked at; unknown cases count as allowing null).
bool AllowsNull(const json::value& root, const json::value& schema, int depth = 0);

// One transform run. Keeps the first failure; every step returns early once
// one is recorded.
class Transformer {
 public:
  Transformer(const json::value& root, StrictDialect dialect) : root_(root), dialect_(dialect) {}
  Result<StrictSchema> Run();

 private:
  struct Def {
    std::string pointer;  // in the original schema: "/definitions/Address"
    const json::value* schema = nullptr;
    bool from_definitions = false;
  };
  struct Edge {        // a kept $ref, for the recursion check
    std::string from;  // def name, "" for the root
    std::string to;    // def name, "" for "#"
    std::string pointer;
    std::string ref;
  };

  bool openai() const { return dialect_ == StrictDialect::kOpenAi; }
  bool gemini() const { return dialect_ == StrictDialect::kGemini; }
  std::string_view DialectName() const { return openai() ? "openai" : gemini() ? "gemini" : "anthropic"; }
  void Fail(std::string_view pointer, std::string_view message);

  // strict_schema.cpp
  bool CollectDefs();
  // Whether the wire root is one `type: object` schema (no root anyOf,
  // oneOf or $ref); any other root is wrapped as {"value": ROOT}.
  static bool IsOneObject(const json::value& wire);
  json::value Node(const json::value& schema, const std::string& ptr, int depth);
  json::value Ref(const json::object& schema, const std::string& ptr, int depth, bool force_inline);
  // The target of a local `ref` copied in place, with the $ref's siblings.
  json::value InlineRef(const json::object& schema, const std::string& ref, const std::string& ptr, int depth);
  std::optional<std::string> DefName(std::string_view ref) const;
  bool MergeAllOf(const json::object& schema, const std::string& ptr, json::object& merged);
  // Merges one plain object branch of an allOf into `merged`.
  bool MergeBranch(const json::object& branch, const std::string& bptr, json::object& merged);
  json::object WireDefs();

  // strict_schema_keywords.cpp
  json::value Keywords(const json::object& in, const std::string& ptr, int depth);
  void Keyword(std::string_view key, const json::value& value, const json::object& in, const std::string& ptr,
               int depth, json::object& out, std::vector<std::string>& notes);
  void ObjectRules(const json::object& in, const std::string& ptr, int depth, json::object& out);
  void EnumKeyword(std::string_view key, const json::value& value, const json::object& in, const std::string& ptr,
                   json::object& out, std::vector<std::string>& notes);
  void BoundKeyword(std::string_view key, const json::value& value, const json::object& in, const std::string& ptr,
                    json::object& out, std::vector<std::string>& notes);
  // `required` as names, each once; false (after Fail) when it is malformed.
  bool RequiredNames(const json::value& required, const std::string& ptr, std::vector<std::string>& names);
  // Every declared property's wire schema (optional ones nullable for OpenAI).
  bool WireProperties(const json::object& declared, const std::vector<std::string>& required_names,
                      const std::string& ptr, int depth, json::object& wire_properties, json::array& wire_required);
  json::value Union(const json::value& branches, const std::string& ptr, int depth);
  json::value Nullable(json::value wire, const json::value& original) const;
  void ClientOnly(const std::string& ptr, std::string_view key, const json::value& value,
                  std::vector<std::string>& notes);

  // strict_schema_limits.cpp
  void CheckOpenAiLimits(const json::value& wire);
  void CheckAnthropicCaps(const json::value& wire);
  void CheckRecursion();
  std::pair<int, std::string> ObjectDepth(const json::value& node, const std::string& ptr, const json::object& defs,
                                          std::map<std::string, std::pair<int, std::string>>& memo, int guard);

  const json::value& root_;
  StrictDialect dialect_;
  std::optional<std::string> error_;
  std::vector<std::string> client_only_;
  std::map<std::string, Def> defs_;     // root definitions/$defs by name
  std::vector<std::string> def_order_;  // names in original order
  std::vector<std::string> needed_;     // defs reached by a kept $ref, in discovery order
  std::map<std::string, json::value> wire_defs_;
  std::vector<std::string> inline_stack_;  // refs being inlined (recursion guard)
  std::string current_def_;                // "" while transforming the root
  std::vector<Edge> edges_;
  int inlines_ = 0;
};

}  // namespace skillrunner::generation::strict_detail
