// libFuzzer target (issue 18): bytes from a socket client through the line
// framer and the JSON-RPC parser, and every answer the server would owe
// serialized, as `serve` does with each line before a skill would run.
//   scripts/fuzz.sh jsonrpc SECONDS

#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "runner/server/json_rpc.h"
#include "runner/server/line_framer.h"

namespace {

using skillrunner::server::Call;
using skillrunner::server::ParsedLine;

void Line(std::string_view line) {
  auto parsed = skillrunner::server::ParseLine(line, 64);
  if (auto* error = std::get_if<boost::json::object>(&parsed)) {
    (void)boost::json::serialize(*error);
    return;
  }
  for (const auto& message : std::get<ParsedLine>(parsed).messages) {
    if (const auto* call = std::get_if<Call>(&message)) {
      (void)skillrunner::server::IdKey(call->id);
      (void)boost::json::serialize(skillrunner::server::ErrorAnswer(call->id, -32601, "method not found"));
    } else {
      (void)boost::json::serialize(std::get<boost::json::object>(message));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte picks the chunk size, so that lines split across reads are covered too.
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  skillrunner::server::LineFramer framer(4096);
  while (!bytes.empty()) {
    std::string_view piece = bytes.substr(0, chunk);
    bytes.remove_prefix(piece.size());
    framer.Feed(piece, Line, [] {});
  }
  return 0;
}
