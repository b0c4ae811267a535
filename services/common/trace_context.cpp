#include "services/common/trace_context.h"

#include <cstdint>
#include <random>

namespace skillrunner {
namespace {

bool LowerHex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(std::string_view text) { return text.find_first_not_of('0') == std::string_view::npos; }

std::string RandomHex(std::size_t digits) {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  while (out.size() < digits) {
    std::uint64_t bits = engine();
    for (int i = 0; i < 16 && out.size() < digits; ++i, bits >>= 4) out += kHex[bits & 0xf];
  }
  if (AllZero(out)) out.back() = '1';
  return out;
}

std::optional<TraceContext> Reject(std::string* why, const char* reason) {
  if (why != nullptr) *why = reason;
  return std::nullopt;
}

}  // namespace

std::optional<TraceContext> ParseTraceparent(std::string_view header, std::string* why) {
  // version "-" trace-id "-" parent-id "-" trace-flags: 2+1+32+1+16+1+2 = 55.
  if (header.size() < 55 || header[2] != '-' || header[35] != '-' || header[52] != '-') {
    return Reject(why, "expected 00-<32 hex digits>-<16 hex digits>-<2 hex digits>");
  }
  std::string_view version = header.substr(0, 2), trace = header.substr(3, 32), span = header.substr(36, 16),
                   flags = header.substr(53, 2);
  if (!LowerHex(version) || !LowerHex(trace) || !LowerHex(span) || !LowerHex(flags)) {
    return Reject(why, "the ids must be lower-case hex digits");
  }
  if (version == "ff") return Reject(why, "version ff is invalid");
  if (version == "00" && header.size() != 55) return Reject(why, "version 00 has exactly 55 characters");
  if (header.size() > 55 && header[55] != '-') return Reject(why, "expected \"-\" after the flags");
  if (AllZero(trace)) return Reject(why, "the trace id is all zeros");
  if (AllZero(span)) return Reject(why, "the parent id is all zeros");
  const int bits = std::stoi(std::string(flags), nullptr, 16);
  return TraceContext{std::string(trace), std::string(span), "", (bits & 1) != 0};
}

std::string FormatTraceparent(const TraceContext& trace) {
  return "00-" + trace.trace_id + "-" + trace.span_id + (trace.sampled ? "-01" : "-00");
}

std::string NewTraceId() { return RandomHex(32); }
std::string NewSpanId() { return RandomHex(16); }

}  // namespace skillrunner
