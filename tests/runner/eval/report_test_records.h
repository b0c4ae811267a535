#pragma once

// Record and summary builders shared by the history, regression and report
// tests, and a way to run a python3 checker over a written file.

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/temp_tree.h"

namespace skillrunner::testing {

inline boost::json::object ParseObject(std::string_view text) { return boost::json::parse(text).as_object(); }

// A successful invocation of `skill` on `case_id` whose review passed.
inline boost::json::object PassRecord(std::string_view skill, std::string_view case_id,
                                      std::optional<int> repeat = std::nullopt) {
  boost::json::object record = ParseObject(R"({
    "result": {"skill": "s", "output": {"name": "Ada"},
               "attempts": [{"n": 1, "kind": "ok", "temperature": 0, "errors": [], "raw": "{\"name\":\"Ada\"}",
                             "input_tokens": 100, "output_tokens": 20, "duration_ms": 250}],
               "metrics": {"mode": "native_strict", "attempts": 1, "validation_retries": 0,
                           "transient_retries": 0, "input_tokens": 100, "output_tokens": 20,
                           "tokens_estimated": false, "duration_ms": 250}},
    "review": {"pass": true, "issues": [], "suggested_fixes": [], "indeterminate": [],
               "criteria_results": [
                 {"criterion_id": "faithful", "verdict": "pass", "reasoning": "ok", "confidence": 90},
                 {"criterion_id": "complete", "verdict": "pass", "reasoning": "ok", "confidence": 80}]},
    "duration_ms": 300})");
  record["skill"] = skill;
  record["case"] = case_id;
  if (repeat) record["repeat"] = *repeat;
  return record;
}

// Valid output, but the review failed on "faithful".
inline boost::json::object FailRecord(std::string_view skill, std::string_view case_id,
                                      std::optional<int> repeat = std::nullopt) {
  boost::json::object record = PassRecord(skill, case_id, repeat);
  record["review"] = ParseObject(R"({"pass": false, "issues": ["phone number invented"],
    "suggested_fixes": ["drop the phone"], "indeterminate": [],
    "criteria_results": [
      {"criterion_id": "faithful", "verdict": "fail", "reasoning": "the phone is not in the text", "confidence": 95},
      {"criterion_id": "complete", "verdict": "indeterminate", "reasoning": "unclear", "confidence": 30}]})");
  return record;
}

// The invocation failed: no valid output after the retries.
inline boost::json::object ErrorRecord(std::string_view skill, std::string_view case_id,
                                       std::optional<int> repeat = std::nullopt) {
  boost::json::object record = ParseObject(R"({
    "error": {"code": "MAX_RETRIES_EXCEEDED", "message": "output invalid after 2 attempts",
              "errors": [{"path": "/email", "message": "does not match format email"}],
              "attempts": [
                {"n": 1, "kind": "validation", "temperature": 0.2,
                 "errors": [{"path": "/email", "message": "does not match format email"}],
                 "raw": "{\"email\":\"nope\"}", "input_tokens": 100, "output_tokens": 9, "duration_ms": 120},
                {"n": 2, "kind": "validation", "temperature": 0,
                 "errors": [{"path": "/email", "message": "does not match format email"}],
                 "raw": "{\"email\":\"still nope\"}", "input_tokens": 140, "output_tokens": 9, "duration_ms": 130}],
              "metrics": {"mode": "validation_loop", "attempts": 2, "validation_retries": 1,
                          "transient_retries": 0, "input_tokens": 240, "output_tokens": 18,
                          "tokens_estimated": false, "duration_ms": 250}},
    "duration_ms": 260})");
  record["skill"] = skill;
  record["case"] = case_id;
  if (repeat) record["repeat"] = *repeat;
  return record;
}

// Valid output, but the judge's answer was unusable.
inline boost::json::object JudgeErrorRecord(std::string_view skill, std::string_view case_id,
                                            std::optional<int> repeat = std::nullopt) {
  boost::json::object record = PassRecord(skill, case_id, repeat);
  record.erase("review");
  record["judge_error"] = ParseObject(R"({"code": "PROVIDER_UNAVAILABLE",
    "message": "judge model answered 503 three times", "attempts": [], "metrics": {}})");
  return record;
}

// Runs `python3 -c SCRIPT FILE` and returns what it printed (stdout and
// stderr), so a test can assert on a real parser's view of a written file.
inline std::string RunPython(const TempTree& tree, std::string_view script, const std::filesystem::path& file) {
  std::filesystem::path script_file = tree.Write("check.py", script);
  std::string command = "python3 '" + script_file.string() + "' '" + file.string() + "' 2>&1";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    pclose(pipe);
  }
  return output;
}

// Prints a real HTML parser's view of a report: balanced tags, forbidden
// elements, external references and the visible text.
inline constexpr std::string_view kHtmlCheckScript = R"(
import sys
from html.parser import HTMLParser
VOID = {"area","base","br","col","embed","hr","img","input","link","meta","source","track","wbr"}
class Check(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.refs, self.text, self.doctype = [], [], [], [], False
        self.forbidden = set()
    def handle_decl(self, decl):
        self.doctype = decl.lower() == "doctype html"
    def attrs(self, tag, attrs):
        if tag in ("script", "link", "img", "iframe", "object", "embed", "base"): self.forbidden.add(tag)
        for k, v in attrs:
            if k.startswith("on"): self.errors.append("handler " + k)
            if k in ("src", "href", "action", "srcset", "poster", "xlink:href"): self.refs.append(v or "")
    def handle_starttag(self, tag, attrs):
        self.attrs(tag, attrs)
        if tag not in VOID: self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.attrs(tag, attrs)
    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag: self.stack.pop()
        else: self.errors.append("</%s> closes %s" % (tag, self.stack[-3:]))
    def handle_data(self, data):
        if not self.stack or self.stack[-1] != "style": self.text.append(data)
c = Check()
c.feed(open(sys.argv[1], encoding="utf-8").read())
c.close()
if c.stack: c.errors.append("unclosed %s" % c.stack)
print("doctype" if c.doctype else "no doctype")
print("errors:", c.errors)
print("forbidden:", sorted(c.forbidden))
print("external:", [r for r in c.refs if not r.startswith("#")])
print("TEXT:", " ".join(" ".join(c.text).split()))
)";

// What kHtmlCheckScript prints first for a well-formed, self-contained page.
inline constexpr std::string_view kHtmlClean = "doctype\nerrors: []\nforbidden: []\nexternal: []\nTEXT: ";

// Prints ElementTree's view of a JUnit file: suites, counts, cases, problems.
inline constexpr std::string_view kJunitDescribeScript = R"(
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
print(root.tag, root.get("name"), root.get("tests"), root.get("failures"), root.get("errors"))
for s in root.findall("testsuite"):
    print(" suite", s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"),
          len(s.findall("testcase")), [(p.get("name"), p.get("value")) for p in s.iter("property")])
    for c in s.findall("testcase"):
        problems = [(p.tag, p.get("type"), p.get("message")) for p in c if p.tag in ("failure", "error")]
        print("  case", repr(c.get("classname")), repr(c.get("name")), c.get("time"), problems)
)";

}  // namespace skillrunner::testing

// What the report tests use unqualified: `using namespace report_records;`.
namespace skillrunner::eval::report_records {
using testing::ErrorRecord;
using testing::FailRecord;
using testing::JudgeErrorRecord;
using testing::ParseObject;
using testing::PassRecord;
using testing::TempTree;
}  // namespace skillrunner::eval::report_records
