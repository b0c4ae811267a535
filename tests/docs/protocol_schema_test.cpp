// schemas/ and docs/protocol.md against the code: every schema is a valid
// draft-07 schema, its enums are the code's words, and the reference names
// every method, notification, error code, attempt kind and member.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/validation/compiled_schema.h"
#include "tests/docs/protocol_schemas.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using testing::ProtocolDoc;
using testing::SchemaFiles;
using testing::SchemaJson;

// The methods the server dispatches (runner/server/methods.cpp); the
// answers test checks this list against the server's own rpc.discover.
const std::vector<std::string> kMethods = {"skills.invoke", "skills.list", "skills.describe", "skills.reload",
                                           "rollouts.list", "health",      "metrics",         "$/cancel",
                                           "auth",          "rpc.discover"};

// `$/cancel`'s files are named cancel.*: "$" and "/" do not belong in a file name.
std::string FileStem(const std::string& method) { return method == "$/cancel" ? "cancel" : method; }

std::vector<std::string> ErrorCodeNames() {
  std::vector<std::string> names;
  for (int i = 0;; ++i) {
    std::string name(ErrorCodeName(static_cast<ErrorCode>(i)));
    if (name == "UNKNOWN") return names;
    names.push_back(name);
  }
}

std::vector<std::string> AttemptKindNames() {
  std::vector<std::string> names{std::string(AttemptKindName(AttemptKind::kOk))};
  // AttemptKindName answers "ok" for a value past the last kind.
  for (int i = 1;; ++i) {
    std::string name(AttemptKindName(static_cast<AttemptKind>(i)));
    if (name == "ok") return names;
    names.push_back(name);
  }
}

std::vector<std::string> Strings(const json::value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.as_array()) out.emplace_back(v.as_string());
  return out;
}

// Every member name under a "properties" anywhere in `schema`.
void CollectProperties(const json::value& schema, std::set<std::string>& out) {
  if (const auto* array = schema.if_array()) {
    for (const auto& v : *array) CollectProperties(v, out);
    return;
  }
  const auto* object = schema.if_object();
  if (!object) return;
  for (const auto& [key, value] : *object) {
    if (key == "properties" && value.is_object()) {
      for (const auto& [name, sub] : value.as_object()) out.insert(std::string(name));
    }
    CollectProperties(value, out);
  }
}

// The lines of every ```json block of `doc`.
std::vector<std::string> JsonExampleLines(const std::string& doc) {
  std::vector<std::string> lines;
  std::istringstream in(doc);
  std::string line;
  bool in_json = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      in_json = !in_json && line == "```json";
    } else if (in_json && !line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

// What is wrong with one example message: a request's or notification's
// params under its method's params schema, an error's data under
// error-data, a result under one of the result schemas. Messages that are
// not JSON-RPC 2.0 (shown as invalid on purpose) are skipped.
std::string ExampleViolations(const json::object& message) {
  if (message.if_contains("jsonrpc") == nullptr || message.at("jsonrpc") != "2.0") return "";
  if (const json::value* method = message.if_contains("method")) {
    const json::value* params = message.if_contains("params");
    if (params == nullptr) return "";
    return testing::SchemaViolations(FileStem(std::string(method->as_string())) + ".params.schema.json", *params);
  }
  if (const json::value* error = message.if_contains("error")) {
    const json::value* data = error->as_object().if_contains("data");
    return data ? testing::SchemaViolations("error-data.schema.json", *data) : "";
  }
  std::string all;
  for (const auto& name : SchemaFiles()) {
    if (name.find(".result.") == std::string::npos) continue;
    std::string violations = testing::SchemaViolations(name, message.at("result"));
    if (violations.empty()) return "";
    all += name + ": " + violations + "\n";
  }
  return "no result schema takes it:\n" + all;
}

TEST(ProtocolSchemaTest, SchemasAreTheMethodsNotificationsAndErrorDataEachAValidDraft07Schema) {
  std::vector<std::string> expected = {"error-data.schema.json", "skills.changed.params.schema.json",
                                       "skills.partial.params.schema.json", "skills.reset.params.schema.json"};
  for (const auto& method : kMethods) {
    expected.push_back(FileStem(method) + ".params.schema.json");
    expected.push_back(FileStem(method) + ".result.schema.json");
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(SchemaFiles(), expected);

  std::ifstream in(std::filesystem::path(SKILLRUNNER_SOURCE_DIR) /
                   "services/validation/metaschemas/draft-07.schema.json");
  std::stringstream text;
  text << in.rdbuf();
  auto meta = validation::CompiledSchema::Compile(json::parse(text.str()));
  ASSERT_TRUE(meta) << meta.error().message;
  for (const auto& name : SchemaFiles()) {
    json::value schema = SchemaJson(name);
    EXPECT_EQ(schema.at("$schema"), "http://json-schema.org/draft-07/schema#") << name;
    for (const auto& e : (*meta)->Validate(schema)) ADD_FAILURE() << name << " " << e.path << ": " << e.message;
    // Compiling resolves every $ref, the ones into sibling files included.
    std::string compiled = testing::SchemaViolations(name, nullptr);
    EXPECT_EQ(compiled.find("does not compile"), std::string::npos) << compiled;
  }
}

TEST(ProtocolSchemaTest, TheSchemasEnumsAreTheCodesWords) {
  const json::value error_data = SchemaJson("error-data.schema.json");
  EXPECT_EQ(Strings(error_data.at_pointer("/definitions/code/enum")), ErrorCodeNames());
  const json::value result = SchemaJson("skills.invoke.result.schema.json");
  EXPECT_EQ(Strings(result.at_pointer("/definitions/attemptKind/enum")), AttemptKindNames());
  const json::value discover = SchemaJson("rpc.discover.result.schema.json");
  EXPECT_EQ(Strings(discover.at_pointer("/properties/methods/items/enum")), kMethods);
}

TEST(ProtocolSchemaTest, TheReferenceNamesEveryMethodCodeKindAndMember) {
  const std::string doc = ProtocolDoc();
  ASSERT_FALSE(doc.empty());
  auto named = [&doc](const std::string& word) { return doc.find("`" + word + "`") != std::string::npos; };
  for (const auto& method : kMethods) EXPECT_TRUE(named(method)) << "method " << method;
  for (const auto& n : {"skills.partial", "skills.reset"}) EXPECT_TRUE(named(n)) << "notification " << n;
  for (const auto& code : ErrorCodeNames()) EXPECT_TRUE(named(code)) << "error code " << code;
  for (const auto& kind : AttemptKindNames()) EXPECT_TRUE(named(kind)) << "attempt kind " << kind;
  for (int code : {-32700, -32600, -32601, -32602, -32603, -32000, -32001, -32002, -32003, -32004}) {
    EXPECT_TRUE(named(std::to_string(code))) << "JSON-RPC code " << code;
  }
  for (const auto& reason : {"line_too_long", "malformed", "batch_too_large", "unauthorized", "draining", "overloaded",
                             "slow_reader", "max_connections"}) {
    EXPECT_TRUE(named(reason)) << "rejected reason " << reason;
  }
  std::set<std::string> members;
  for (const auto& name : SchemaFiles()) {
    EXPECT_NE(doc.find("../schemas/" + name), std::string::npos) << "no link to " << name;
    CollectProperties(SchemaJson(name), members);
  }
  for (const auto& member : members) EXPECT_TRUE(named(member)) << "member " << member;
  // Exact shapes: an elided member is not documentation. (The one "…" is
  // part of the server's UNAUTHORIZED message, quoted as it is.)
  EXPECT_EQ(doc.find("..."), std::string::npos);
}

TEST(ProtocolSchemaTest, TheReferencesJsonExamplesHoldToTheSchemas) {
  std::size_t checked = 0;
  for (const auto& line : JsonExampleLines(ProtocolDoc())) {
    boost::system::error_code ec;
    json::value example = json::parse(line, ec);
    ASSERT_FALSE(ec) << "not JSON: " << line;
    std::vector<json::value> messages;
    if (example.is_array()) {
      messages.assign(example.as_array().begin(), example.as_array().end());
    } else {
      messages.push_back(example);
    }
    for (const auto& message : messages) {
      EXPECT_EQ(ExampleViolations(message.as_object()), "") << line;
      ++checked;
    }
  }
  EXPECT_GE(checked, 15u);
}

}  // namespace
}  // namespace skillrunner
