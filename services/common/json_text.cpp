#include "services/common/json_text.h"

#include <algorithm>
#include <boost/json/error.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <charconv>
#include <cmath>
#include <limits>

#include "services/common/utf8.h"

namespace skillrunner {
namespace {

void WriteDouble(double d, std::string& out) {
  if (!std::isfinite(d)) {  // not representable in JSON; Boost.JSON writes these too
    out += boost::json::serialize(boost::json::value(d));
    return;
  }
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d);
  std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  out += text;
  // Keep it a JSON number that reads back as a double: "1" -> "1.0".
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

template <class Int>
void WriteInteger(Int n, std::string& out) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, n);
  out.append(buffer, static_cast<std::size_t>(end - buffer));
}

void Write(const boost::json::value& v, std::string& out, int indent) {
  const bool pretty = indent >= 0;
  auto newline = [&](int level) {
    if (!pretty) return;
    out.push_back('\n');
    out.append(static_cast<std::size_t>(level) * 2, ' ');
  };
  if (const auto* obj = v.if_object(); obj && !obj->empty()) {
    out.push_back('{');
    bool first = true;
    for (const auto& [key, member] : *obj) {
      if (!first) out.push_back(',');
      first = false;
      newline(indent + 1);
      AppendJsonString(key, out);
      out += pretty ? ": " : ":";
      Write(member, out, pretty ? indent + 1 : -1);
    }
    newline(indent);
    out.push_back('}');
  } else if (const auto* arr = v.if_array(); arr && !arr->empty()) {
    out.push_back('[');
    bool first = true;
    for (const auto& item : *arr) {
      if (!first) out.push_back(',');
      first = false;
      newline(indent + 1);
      Write(item, out, pretty ? indent + 1 : -1);
    }
    newline(indent);
    out.push_back(']');
  } else if (v.is_double()) {
    WriteDouble(v.get_double(), out);
  } else if (const auto* text = v.if_string()) {
    AppendJsonString(*text, out);
  } else if (v.is_int64()) {
    WriteInteger(v.get_int64(), out);
  } else if (v.is_uint64()) {
    WriteInteger(v.get_uint64(), out);
  } else {
    out += boost::json::serialize(v);  // null, true, false, {} and []
  }
}

}  // namespace

void AppendJsonString(std::string_view text, std::string& out) {
  // Boost.JSON's escapes, byte for byte: '"', '\\' and control characters
  // (\b \t \n \f \r, others \u00xx); everything else as it is.
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    out.push_back('\\');
    switch (c) {
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\b':
        out.push_back('b');
        break;
      case '\t':
        out.push_back('t');
        break;
      case '\n':
        out.push_back('n');
        break;
      case '\f':
        out.push_back('f');
        break;
      case '\r':
        out.push_back('r');
        break;
      default:
        out.append("u00", 3);
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
}

void AppendCompactJson(const boost::json::value& value, std::string& out) { Write(value, out, -1); }

std::string CompactJson(const boost::json::value& value) {
  std::string out;
  Write(value, out, -1);
  return out;
}

std::string PrettyJson(const boost::json::value& value) {
  std::string out;
  Write(value, out, 0);
  return out;
}

std::expected<boost::json::value, std::string> ParseJsonText(std::string_view text, int max_depth) {
  boost::json::parse_options options;
  options.max_depth = static_cast<std::size_t>(max_depth);
  boost::json::stream_parser parser({}, options);
  boost::system::error_code ec;
  std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (!ec) {
    used = text.size();
    parser.finish(ec);
  }
  if (!ec) return parser.release();
  std::optional<std::size_t> bad = InvalidUtf8At(text.substr(0, std::min(used + 1, text.size())));
  if (bad && ec == boost::json::error::syntax) {
    used = *bad;  // Boost.JSON calls a byte that breaks UTF-8 a syntax error: say what it is
  }
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < used && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  const std::string what =
      bad && ec == boost::json::error::syntax ? "invalid UTF-8 at byte " + std::to_string(*bad + 1) : ec.message();
  return std::unexpected("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
}

std::optional<std::int64_t> JsonInteger(const boost::json::value& value) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  if (value.is_int64()) return value.get_int64();
  if (value.is_uint64()) return static_cast<std::int64_t>(std::min<std::uint64_t>(value.get_uint64(), kMax));
  if (!value.is_double()) return std::nullopt;
  const double d = value.get_double();
  if (!std::isfinite(d) || std::trunc(d) != d) return std::nullopt;
  if (d >= 9223372036854775808.0) return kMax;  // 2^63: the first double past int64
  if (d < -9223372036854775808.0) return kMin;
  return static_cast<std::int64_t>(d);
}

}  // namespace skillrunner
