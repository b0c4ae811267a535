#include "services/validation/formats.h"

#include <arpa/inet.h>

#include <boost/url/parse.hpp>
#include <cctype>
#include <string>
#include <valijson/adapters/std_string_adapter.hpp>
#include <valijson/validation_visitor.hpp>

namespace skillrunner::validation {
namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// RFC 1123 host name: dot-separated labels of letters, digits and inner
// hyphens, each 1-63 characters, 253 in all (a final dot is allowed).
bool IsHostname(std::string_view text) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty() || text.size() > 253) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('.', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view label = text.substr(start, end - start);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    start = end + 1;
  }
  return true;
}

bool IsIpv4(std::string_view text) {
  std::string copy(text);
  in_addr address{};
  return inet_pton(AF_INET, copy.c_str(), &address) == 1;
}

bool IsIpv6(std::string_view text) {
  std::string copy(text);
  in6_addr address{};
  return inet_pton(AF_INET6, copy.c_str(), &address) == 1;
}

bool IsAtext(char c) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-/=?^_`{|}~";
  return IsAlnum(c) || kSpecials.find(c) != std::string_view::npos;
}

// RFC 5321 local part: a dot-atom or a quoted string.
bool IsLocalPart(std::string_view local) {
  if (local.empty() || local.size() > 64) return false;
  if (local.front() == '"') {
    if (local.size() < 2 || local.back() != '"') return false;
    for (std::size_t i = 1; i + 1 < local.size(); ++i) {
      char c = local[i];
      if (c == '\\') {
        if (++i + 1 >= local.size()) return false;
      } else if (c == '"' || static_cast<unsigned char>(c) < 0x20) {
        return false;
      }
    }
    return true;
  }
  if (local.front() == '.' || local.back() == '.') return false;
  for (std::size_t i = 0; i < local.size(); ++i) {
    if (local[i] == '.') {
      if (local[i + 1] == '.') return false;
    } else if (!IsAtext(local[i])) {
      return false;
    }
  }
  return true;
}

// RFC 5321 mailbox: local-part "@" (host name | "[" address literal "]").
bool IsEmail(std::string_view text) {
  std::size_t at = text.rfind('@');
  if (at == std::string_view::npos) return false;
  std::string_view domain = text.substr(at + 1);
  if (!IsLocalPart(text.substr(0, at))) return false;
  if (domain.size() > 2 && domain.front() == '[' && domain.back() == ']') {
    std::string_view literal = domain.substr(1, domain.size() - 2);
    if (literal.starts_with("IPv6:")) return IsIpv6(literal.substr(5));
    return IsIpv4(literal);
  }
  return IsHostname(domain) && domain.back() != '.';
}

// RFC 4122 textual form: 8-4-4-4-12 hex digits.
bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

bool IsUri(std::string_view text) { return boost::urls::parse_uri(text).has_value(); }

// date, time and date-time stay valijson's own checks.
bool ValijsonFormat(std::string_view format, std::string_view text) {
  std::string copy(text);
  valijson::adapters::StdStringAdapter adapter(copy);
  std::unordered_map<std::string, std::regex> regexes;
  valijson::ValidationVisitor<valijson::adapters::StdStringAdapter> visitor(adapter, {"<root>"}, true, nullptr,
                                                                            regexes);
  valijson::constraints::FormatConstraint constraint;
  constraint.setFormat(std::string(format));
  return visitor.visit(constraint);
}

}  // namespace

bool IsCheckedFormat(std::string_view format) {
  for (std::string_view name : {"email", "hostname", "ipv4", "ipv6", "uuid", "uri", "date", "time", "date-time"}) {
    if (format == name) return true;
  }
  return false;
}

bool CheckFormat(std::string_view format, std::string_view text) {
  if (format == "email") return IsEmail(text);
  if (format == "hostname") return IsHostname(text);
  if (format == "ipv4") return IsIpv4(text);
  if (format == "ipv6") return IsIpv6(text);
  if (format == "uuid") return IsUuid(text);
  if (format == "uri") return IsUri(text);
  if (format == "date" || format == "time" || format == "date-time") {
    return ValijsonFormat(format, text);
  }
  return true;
}

}  // namespace skillrunner::validation
