#include "runner/view/json_diff.h"

#include <algorithm>
#include <string>

#include "services/common/json_pointer.h"

namespace skillrunner::view {
namespace json = boost::json;

namespace {

struct Differ {
  std::size_t limit;
  json::array out;

  bool Full() const { return out.size() >= limit; }

  void Add(const char* op, const std::string& pointer, const json::value* a, const json::value* b) {
    if (Full()) return;
    json::object entry{{"op", op}, {"pointer", pointer}};
    if (a != nullptr) entry["a"] = *a;
    if (b != nullptr) entry["b"] = *b;
    out.push_back(std::move(entry));
  }

  void Objects(const json::object& a, const json::object& b, const std::string& at) {
    for (const auto& [key, value] : a) {
      const std::string pointer = AppendPointer(at, key);
      if (const json::value* other = b.if_contains(key)) {
        Walk(value, *other, pointer);
      } else {
        Add("added", pointer, &value, nullptr);
      }
    }
    for (const auto& [key, value] : b) {
      if (!a.contains(key)) Add("removed", AppendPointer(at, key), nullptr, &value);
    }
  }

  void Arrays(const json::array& a, const json::array& b, const std::string& at) {
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) Walk(a[i], b[i], AppendPointer(at, std::to_string(i)));
    for (std::size_t i = common; i < a.size(); ++i) Add("added", AppendPointer(at, std::to_string(i)), &a[i], nullptr);
    for (std::size_t i = common; i < b.size(); ++i) {
      Add("removed", AppendPointer(at, std::to_string(i)), nullptr, &b[i]);
    }
  }

  void Walk(const json::value& a, const json::value& b, const std::string& at) {
    if (Full()) return;
    if (a.is_object() && b.is_object()) return Objects(a.as_object(), b.as_object(), at);
    if (a.is_array() && b.is_array()) return Arrays(a.as_array(), b.as_array(), at);
    if (a != b) Add("changed", at, &a, &b);
  }
};

}  // namespace

json::array DiffJson(const json::value& a, const json::value& b, std::size_t limit) {
  Differ differ{limit, {}};
  differ.Walk(a, b, "");
  return std::move(differ.out);
}

}  // namespace skillrunner::view
