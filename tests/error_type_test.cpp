// design.md §9.9: one error type. The public functions of every module fail
// with `Error` (`Result<T>`), never with a bare string: every
// `expected<..., std::string>` in a header under runner/ or services/ (but
// services/common, which defines Error) is named with its file and line.
// Comments and string literals do not count (tests/error_discipline_test.cpp
// checks the same rule with one regular expression).

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {

namespace fs = std::filesystem;

// `text` with its comments and the insides of its string and character
// literals blanked out (newlines kept, so offsets keep their line numbers).
std::string CodeOnly(const std::string& text) {
  std::string out = text;
  auto blank = [&out](std::size_t from, std::size_t to) {
    for (; from < to && from < out.size(); ++from) {
      if (out[from] != '\n') out[from] = ' ';
    }
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"' && i > 0 && out[i - 1] == 'R') {  // R"delim(...)delim"
      const std::size_t paren = out.find('(', i);
      if (paren == std::string::npos) break;
      const std::string close = ")" + out.substr(i + 1, paren - i - 1) + "\"";
      std::size_t end = out.find(close, paren);
      end = end == std::string::npos ? out.size() : end + close.size();
      blank(i + 1, end - 1);
      i = end - 1;
    } else if (out[i] == '"' || (out[i] == '\'' && (i == 0 || !std::isalnum(static_cast<unsigned char>(out[i - 1]))))) {
      const char quote = out[i];
      std::size_t end = i + 1;
      for (; end < out.size() && out[end] != quote && out[end] != '\n'; ++end) {
        if (out[end] == '\\') ++end;
      }
      blank(i + 1, end);
      i = end;
    } else if (out.compare(i, 2, "//") == 0) {
      const std::size_t end = out.find('\n', i);
      blank(i, end == std::string::npos ? out.size() : end);
      i = end == std::string::npos ? out.size() : end;
    } else if (out.compare(i, 2, "/*") == 0) {
      std::size_t end = out.find("*/", i + 2);
      end = end == std::string::npos ? out.size() : end + 2;
      blank(i, end);
      i = end - 1;
    }
  }
  return out;
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The last top-level template argument of the `<...>` that opens at `open`,
// without spaces; "" when the brackets do not close.
std::string LastTemplateArgument(const std::string& text, std::size_t open) {
  int depth = 0;
  std::size_t last_start = open + 1;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 1) last_start = i + 1;
    if (c == '>' && --depth == 0) {
      std::string argument;
      for (char a : text.substr(last_start, i - last_start)) {
        if (std::isspace(static_cast<unsigned char>(a)) == 0) argument.push_back(a);
      }
      return argument;
    }
  }
  return "";
}

// "FILE:LINE: ..." for each `expected<..., std::string>` of `text` (the
// file at `path`), however its declaration is split over lines.
std::vector<std::string> StringErrors(const std::string& path, const std::string& text) {
  const std::string code = CodeOnly(text);
  std::vector<std::string> out;
  for (std::size_t at = code.find("expected<"); at != std::string::npos; at = code.find("expected<", at + 1)) {
    if (at > 0 && IsIdentifierChar(code[at - 1])) continue;  // unexpected<...>, my_expected<...>
    std::string error = LastTemplateArgument(code, at + std::string("expected").size());
    if (error.starts_with("const")) error.erase(0, 5);
    if (error != "std::string" && error != "string") continue;
    const auto line = 1 + std::count(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    out.push_back(path + ":" + std::to_string(line) +
                  ": std::expected<_, std::string>; return Result<T> (services/common/error.h) instead");
  }
  return out;
}

using skillrunner::testing::ReadFile;

TEST(ErrorTypeTest, AStringErrorIsNamedWithItsFileAndLineHoweverItIsWritten) {
  const std::string text =
      "#pragma once\n"
      "// std::expected<int, std::string> in a comment does not count\n"
      "std::expected<int, std::string> A();\n"
      "static std::expected<std::map<std::string, int>,\n"
      "                     std::string>\n"
      "B();\n"
      "using F = std::function<std::expected<void, std::string>(int)>;\n"
      "std::expected<std::string, Error> C();\n"
      "std::expected<std::string, std::vector<std::string>> D();\n"
      "auto e = std::unexpected<std::string>(\"expected<int, std::string>\");\n"
      "/* std::expected<int, std::string>\n"
      "   E(); */\n"
      "Result<int> G();\n";
  EXPECT_EQ(StringErrors("runner/x.h", text),
            (std::vector<std::string>{
                "runner/x.h:3: std::expected<_, std::string>; return Result<T> (services/common/error.h) instead",
                "runner/x.h:4: std::expected<_, std::string>; return Result<T> (services/common/error.h) instead",
                "runner/x.h:7: std::expected<_, std::string>; return Result<T> (services/common/error.h) instead"}));
}

TEST(ErrorTypeTest, NoHeaderOutsideServicesCommonFailsWithAString) {
  const fs::path root = SKILLRUNNER_SOURCE_DIR;
  std::vector<std::string> problems;
  std::size_t headers = 0;
  for (const char* folder : {"runner", "services"}) {
    ASSERT_TRUE(fs::is_directory(root / folder)) << folder;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".h") continue;
      const std::string path = fs::relative(entry.path(), root).generic_string();
      if (path.starts_with("services/common/")) continue;
      ++headers;
      for (auto& problem : StringErrors(path, ReadFile(entry.path()))) problems.push_back(std::move(problem));
    }
  }
  EXPECT_GT(headers, 200u);
  EXPECT_EQ(problems, std::vector<std::string>{});  // each FILE:LINE with what to return instead
}

}  // namespace
}  // namespace skillrunner
