// libFuzzer target (issue 18): bytes from a socket client through the line
// framer, the JSON-RPC parser and the dispatch of each call as `serve` does
// it (runner/server/connection.cpp), up to the point a skill would
// run: auth's token, skills.invoke's params (ReadInvokeParams, the -32602
// answer), $/cancel's id, and every answer the server would owe serialized.
//   scripts/fuzz.sh jsonrpc SECONDS

#include <boost/json/serialize.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "runner/server/json_rpc.h"
#include "runner/server/line_framer.h"
#include "runner/server/params.h"

namespace {

namespace json = boost::json;
namespace server = skillrunner::server;
using server::Call;
using server::ParsedLine;

// What HandleCall does with a call before any skill, state or socket is involved.
json::object Dispatch(Call& call) {
  (void)server::IdKey(call.id);
  if (call.method == "auth") {
    return server::ResultAnswer(call.id,
                                json::object{{"authenticated", !server::ParamString(call.params, "token").empty()}});
  }
  if (call.method == "$/cancel") {
    const json::value* id = server::ParamMember(call.params, "id");
    return server::ResultAnswer(call.id, json::object{{"cancelled", id != nullptr && !server::IdKey(*id).empty()}});
  }
  if (call.method == "skills.describe") {
    const json::value* skill = server::ParamMember(call.params, "skill");
    if (!skill || !skill->is_string()) {
      return server::InvalidParamsAnswer(call.id, {{"/skill", "expected a skill id (string)"}});
    }
    return server::ResultAnswer(call.id, *skill);
  }
  if (call.method != "skills.invoke") {
    return server::ErrorAnswer(call.id, server::kMethodNotFound, "Method not found: \"" + call.method + "\"",
                               json::object{{"method", call.method}});
  }
  auto params = server::ReadInvokeParams(call.params);
  if (!params) return server::InvalidParamsAnswer(call.id, params.error());
  // Here serve would look the skill up and run it with this input and these options.
  return server::ResultAnswer(call.id, json::object{{"skill", params->skill}, {"input", std::move(params->input)}});
}

void Line(std::string_view line) {
  auto parsed = server::ParseLine(line, 64);
  if (auto* error = std::get_if<json::object>(&parsed)) {
    (void)json::serialize(*error);
    return;
  }
  json::array batch;
  for (auto& message : std::get<ParsedLine>(parsed).messages) {
    if (auto* call = std::get_if<Call>(&message)) {
      json::object answer = Dispatch(*call);
      if (!call->notification) batch.push_back(std::move(answer));
    } else {
      batch.push_back(std::move(std::get<json::object>(message)));
    }
  }
  (void)json::serialize(batch);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte picks the chunk size, so that lines split across reads are covered too.
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  server::LineFramer framer(4096);
  while (!bytes.empty()) {
    std::string_view piece = bytes.substr(0, chunk);
    bytes.remove_prefix(piece.size());
    framer.Feed(piece, Line, [] {});
  }
  return 0;
}
