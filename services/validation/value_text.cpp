#include "services/validation/value_text.h"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <cmath>

namespace skillrunner::validation {
namespace {

constexpr std::size_t kMaxQuotedChars = 40;

std::string RenderDouble(double d) {
  if (!std::isfinite(d)) return "null";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d);
  if (ec != std::errc()) return "0";
  return std::string(buffer, end);
}

void AppendJson(const boost::json::value& value, std::string& out) {
  switch (value.kind()) {
    case boost::json::kind::double_:
      out += RenderDouble(value.get_double());
      return;
    case boost::json::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& item : value.get_array()) {
        if (!first) out += ',';
        first = false;
        AppendJson(item, out);
      }
      out += ']';
      return;
    }
    case boost::json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& member : value.get_object()) {
        if (!first) out += ',';
        first = false;
        out += boost::json::serialize(boost::json::value(member.key()));
        out += ':';
        AppendJson(member.value(), out);
      }
      out += '}';
      return;
    }
    default:
      out += boost::json::serialize(value);
  }
}

// Cuts a UTF-8 string to at most `limit` code points.
std::string Truncate(std::string_view text, std::size_t limit, bool& cut) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (count == limit) {
      cut = true;
      return std::string(text.substr(0, i));
    }
    ++count;
  }
  cut = false;
  return std::string(text);
}

}  // namespace

std::string RenderJson(const boost::json::value& value) {
  std::string out;
  AppendJson(value, out);
  return out;
}

std::string DescribeValue(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::object:
      return "object";
    case boost::json::kind::array:
      return "array";
    case boost::json::kind::string: {
      bool cut = false;
      std::string head = Truncate(value.get_string(), kMaxQuotedChars, cut);
      std::string quoted = boost::json::serialize(boost::json::value(head));
      if (cut) quoted.insert(quoted.size() - 1, "…");
      return quoted;
    }
    default:
      return RenderJson(value);
  }
}

const char* JsonTypeName(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::object:
      return "object";
    case boost::json::kind::array:
      return "array";
    case boost::json::kind::string:
      return "string";
    case boost::json::kind::bool_:
      return "boolean";
    case boost::json::kind::null:
      return "null";
    default:
      return "number";
  }
}

std::string DescribeTypedValue(const boost::json::value& value) {
  if (value.is_null() || value.is_object() || value.is_array()) {
    return JsonTypeName(value);
  }
  return std::string(JsonTypeName(value)) + " " + DescribeValue(value);
}

}  // namespace skillrunner::validation
