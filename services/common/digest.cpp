#include "services/common/digest.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "services/common/json_text.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

json::value Sorted(const json::value& value) {
  if (value.is_array()) {
    json::array items;
    for (const auto& item : value.get_array()) items.push_back(Sorted(item));
    return items;
  }
  if (!value.is_object()) return value;
  std::vector<const json::key_value_pair*> members;
  for (const auto& member : value.get_object()) members.push_back(&member);
  std::sort(members.begin(), members.end(), [](auto* a, auto* b) { return a->key() < b->key(); });
  json::object sorted;
  sorted.reserve(members.size());
  for (const auto* member : members) sorted.emplace(member->key(), Sorted(member->value()));
  return sorted;
}

}  // namespace

std::array<unsigned char, 32> Sha256(std::string_view text) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

std::string Sha256Hex(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned char byte : Sha256(text)) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

// Boost.JSON keeps an object's members in insertion order, so an object built
// from the sorted members serialises sorted.
std::string CanonicalJson(const json::value& value) { return CompactJson(Sorted(value)); }

}  // namespace skillrunner
