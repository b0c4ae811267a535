#pragma once

#include <optional>
#include <regex>
#include <string_view>

namespace skillrunner {

// Whether a pattern's numbers are safe to give libstdc++'s std::regex. GCC
// 12's regex compiler reads a repetition count ({m}, {m,n}) or a
// back-reference (\N) into a long with no overflow check
// (regex_compiler.tcc, _Compiler::_M_cur_int_value): past 18 digits that is
// undefined behaviour (found by the schema_strict fuzz target with UBSan).
// A count or back-reference of more than 9 digits is refused before
// std::regex sees the pattern; no real pattern needs one (std::regex refuses
// more than 100,000 states anyway).
bool RegexNumbersFit(std::string_view pattern);

// A schema's pattern (ECMAScript) compiled, or nullopt when std::regex
// refuses it or its numbers do not fit. Every std::regex built from a
// schema's text is built here.
std::optional<std::regex> CompileSchemaRegex(std::string_view pattern);

}  // namespace skillrunner
