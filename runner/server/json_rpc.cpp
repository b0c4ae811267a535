#include "runner/server/json_rpc.h"

#include <boost/json/error.hpp>
#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/utf8.h"

namespace skillrunner::server {
namespace json = boost::json;

namespace {

json::object InvalidRequest(const json::value& id, std::string_view why) {
  return ErrorAnswer(id, kInvalidRequest, std::string("Invalid Request: ") + std::string(why));
}

// Reads one member of a line. The id is echoed when it is usable, even when
// the rest of the request is not, so that the client can match the error.
Message ReadRequest(const json::value& value) {
  if (!value.is_object()) return InvalidRequest(nullptr, "expected a request object");
  const json::object& object = value.as_object();
  json::value id = nullptr;
  const json::value* id_member = object.if_contains("id");
  if (id_member) {
    if (!id_member->is_string() && !id_member->is_number() && !id_member->is_null()) {
      return InvalidRequest(nullptr, "\"id\" must be a string, a number or null");
    }
    id = *id_member;
  }
  const json::value* version = object.if_contains("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0") {
    return InvalidRequest(id, "\"jsonrpc\" must be \"2.0\"");
  }
  const json::value* method = object.if_contains("method");
  if (!method || !method->is_string()) return InvalidRequest(id, "\"method\" must be a string");
  Call call;
  call.id = id;
  call.notification = id_member == nullptr;
  call.method = std::string(method->as_string());
  if (const json::value* params = object.if_contains("params")) {
    if (!params->is_object() && !params->is_array()) {
      return InvalidRequest(id, "\"params\" must be an object or an array");
    }
    call.params = *params;
  }
  if (const json::value* auth = object.if_contains("auth")) {
    if (!auth->is_string()) return InvalidRequest(id, "\"auth\" must be a string");
    call.auth = std::string(auth->as_string());
  }
  return call;
}

}  // namespace

std::variant<ParsedLine, json::object> ParseLine(std::string_view line, std::size_t max_depth) {
  json::parse_options options;
  options.max_depth = max_depth;
  json::parser parser(json::storage_ptr(), options);
  boost::system::error_code ec;
  std::size_t used = parser.write_some(line.data(), line.size(), ec);
  if (!ec && used < line.size()) {
    // Only whitespace may follow the value.
    std::size_t rest = line.find_first_not_of(" \t\r", used);
    if (rest != std::string_view::npos) {
      return ErrorAnswer(nullptr, kParseError,
                         "Parse error at byte " + std::to_string(rest + 1) + ": unexpected text after the JSON value");
    }
  }
  if (ec) {
    // Boost.JSON calls a byte that breaks UTF-8 a syntax error: say what it is.
    if (auto bad = InvalidUtf8At(line.substr(0, used + 1)); bad && ec == json::error::syntax) {
      return ErrorAnswer(nullptr, kParseError, "Parse error at byte " + std::to_string(*bad + 1) + ": invalid UTF-8");
    }
    return ErrorAnswer(nullptr, kParseError, "Parse error at byte " + std::to_string(used + 1) + ": " + ec.message());
  }
  json::value value = parser.release();
  ParsedLine parsed;
  if (value.is_array()) {
    if (value.as_array().empty()) return InvalidRequest(nullptr, "empty batch");
    parsed.batch = true;
    for (const auto& member : value.as_array()) parsed.messages.push_back(ReadRequest(member));
  } else {
    parsed.messages.push_back(ReadRequest(value));
  }
  return parsed;
}

json::object ResultAnswer(const json::value& id, json::value result) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::object ErrorAnswer(const json::value& id, int code, std::string_view message, json::value data) {
  json::object error{{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

std::string IdKey(const json::value& id) { return json::serialize(id); }

}  // namespace skillrunner::server
