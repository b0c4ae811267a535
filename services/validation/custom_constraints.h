#pragma once

#include <string>
#include <string_view>

namespace valijson {
class SchemaParser;
}

namespace skillrunner::validation {

// Keywords the schema rewrite (schema_rewrite.h) puts in place of, or next to,
// standard ones. Their constraints push descriptions starting with kTag so
// the error report can tell them from valijson's own.
inline constexpr std::string_view kEnterKeyword = "x-sr-enter";      // id: entering subschema
inline constexpr std::string_view kLeaveKeyword = "x-sr-leave";      // id: leaving subschema
inline constexpr std::string_view kFormatKeyword = "x-sr-format";    // replaces "format"
inline constexpr std::string_view kIntegerKeyword = "x-sr-integer";  // "integer" type check
inline constexpr std::string_view kMultipleOfKeyword = "x-sr-multipleOf";
inline constexpr std::string_view kUniqueItemsKeyword = "x-sr-uniqueItems";  // replaces "uniqueItems"
inline constexpr std::string_view kOriginalTypeKeyword = "x-sr-type";        // the original "type"
inline constexpr std::string_view kWrappedKeyword = "x-sr-wrapped";          // anyOf/oneOf moved here

inline constexpr char kTag = '\x01';
inline constexpr std::string_view kEnterTag =
    "\x01"
    "enter:";
inline constexpr std::string_view kLeaveTag =
    "\x01"
    "leave:";
inline constexpr std::string_view kFormatTag =
    "\x01"
    "format";
inline constexpr std::string_view kIntegerTag =
    "\x01"
    "integer";
inline constexpr std::string_view kMultipleOfTag =
    "\x01"
    "multipleOf";
inline constexpr std::string_view kUniqueItemsTag =
    "\x01"
    "uniqueItems:";  // then "FIRST SECOND"

// Registers the builders for the keywords above with `parser`.
void AddCustomConstraints(valijson::SchemaParser& parser);

}  // namespace skillrunner::validation
