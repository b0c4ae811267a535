#include "runner/json_text.h"

#include <boost/json/serialize.hpp>

namespace skillrunner {
namespace {

void Write(const boost::json::value& v, std::string& out, int indent) {
  auto newline = [&](int level) {
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
      out += boost::json::serialize(boost::json::string(key));
      out += ": ";
      Write(member, out, indent + 1);
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
      Write(item, out, indent + 1);
    }
    newline(indent);
    out.push_back(']');
  } else {
    out += boost::json::serialize(v);
  }
}

}  // namespace

std::string PrettyJson(const boost::json::value& value) {
  std::string out;
  Write(value, out, 0);
  return out;
}

}  // namespace skillrunner
