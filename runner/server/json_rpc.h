#pragma once

// JSON-RPC 2.0 framing for the JSON-lines socket (design.md §6): one message per
// line, a request object or a batch (array) of them. Pure functions, no I/O.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace skillrunner::server {

// Standard codes (https://www.jsonrpc.org/specification#error_object).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// One well-formed request of a line.
struct Call {
  boost::json::value id;      // string, number or null; meaningless for a notification
  bool notification = false;  // no "id" member: never answered
  std::string method;
  boost::json::value params;  // object, array or null (absent)
  std::string auth;           // the optional top-level "auth" member (a token)
};

// A line's messages in order: each a Call, or the error answer owed for a
// member that is not a valid request.
using Message = std::variant<Call, boost::json::object>;

struct ParsedLine {
  bool batch = false;
  std::vector<Message> messages;
};

// Parses one line (without its '\n'). Invalid JSON → the -32700 answer with
// the byte position; an empty batch → -32600; otherwise each member is a Call
// or its own -32600 answer.
std::variant<ParsedLine, boost::json::object> ParseLine(std::string_view line, std::size_t max_depth);

// {"jsonrpc":"2.0","id":…,"result":…}
boost::json::object ResultAnswer(const boost::json::value& id, boost::json::value result);

// {"jsonrpc":"2.0","id":…,"error":{"code","message","data"?}}
boost::json::object ErrorAnswer(const boost::json::value& id, int code, std::string_view message,
                                boost::json::value data = nullptr);

// A compact key for an id (its JSON text), so that 1 and "1" differ.
std::string IdKey(const boost::json::value& id);

}  // namespace skillrunner::server
