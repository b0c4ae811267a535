#include "runner/tree/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <regex>
#include <unordered_set>
#include <vector>

#include "services/common/utf8.h"
#include "services/validation/error_paths.h"

namespace skillrunner {
namespace json = boost::json;

void SourceMap::Add(std::string pointer, SourcePosition value, SourcePosition key) {
  entries_[std::move(pointer)] = Entry{value, key};
}

SourcePosition SourceMap::Find(std::string_view pointer) const {
  std::string p(pointer);
  while (true) {
    if (auto it = entries_.find(p); it != entries_.end()) return it->second.value;
    if (p.empty()) return {};
    p.resize(p.rfind('/'));
  }
}

SourcePosition SourceMap::FindKey(std::string_view pointer) const {
  if (auto it = entries_.find(std::string(pointer)); it != entries_.end() && it->second.key.line > 0) {
    return it->second.key;
  }
  return Find(pointer);
}

namespace {

SourcePosition PositionOf(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

struct ConvertError {
  YamlError error;
};

// Text becomes JSON strings, which are UTF-8; yaml-cpp passes other bytes
// through (and a JSON Schema check of such a string read out of bounds in
// valijson: found by tests/fuzz/skill_yaml_fuzz.cpp).
void CheckUtf8(const std::string& text, SourcePosition pos, std::string_view what) {
  if (!IsValidUtf8(text)) {
    throw ConvertError{{pos, std::string(what) + " is not valid UTF-8 (a YAML file is UTF-8 text, or UTF-16 or "
                                                 "UTF-32 with a byte order mark)"}};
  }
}

// Resolves a plain (unquoted) scalar by the YAML 1.2 core schema.
json::value ResolvePlainScalar(const std::string& text, SourcePosition pos) {
  static const std::regex kNull("null|Null|NULL|~|");
  static const std::regex kTrue("true|True|TRUE");
  static const std::regex kFalse("false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kSpecial("[-+]?\\.(inf|Inf|INF)|\\.nan|\\.NaN|\\.NAN");

  // Most scalars are words: only these first characters can start a
  // non-string core-schema value.
  if (!text.empty() && std::string_view("0123456789+-.~nNtTfF").find(text[0]) == std::string_view::npos) {
    return json::string(text);
  }
  if (std::regex_match(text, kNull)) return nullptr;
  if (std::regex_match(text, kTrue)) return true;
  if (std::regex_match(text, kFalse)) return false;
  auto parse_int = [&](std::string_view digits, int base) -> json::value {
    bool negative = !digits.empty() && digits.front() == '-';
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
      digits.remove_prefix(1);
    }
    std::uint64_t magnitude = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    if (ec == std::errc() && ptr == digits.data() + digits.size()) {
      if (!negative) {
        if (magnitude <= static_cast<std::uint64_t>(INT64_MAX)) {
          return static_cast<std::int64_t>(magnitude);
        }
        return magnitude;
      }
      if (magnitude <= static_cast<std::uint64_t>(INT64_MAX) + 1) {
        return static_cast<std::int64_t>(0 - magnitude);
      }
    }
    return std::strtod(text.c_str(), nullptr);  // too large: a float
  };
  if (std::regex_match(text, kInt)) return parse_int(text, 10);
  if (std::regex_match(text, kOct)) return parse_int(std::string_view(text).substr(2), 8);
  if (std::regex_match(text, kHex)) return parse_int(std::string_view(text).substr(2), 16);
  if (std::regex_match(text, kFloat)) return std::strtod(text.c_str(), nullptr);
  if (std::regex_match(text, kSpecial)) {
    throw ConvertError{{pos, "the YAML value " + text + " has no JSON equivalent"}};
  }
  return json::string(text);
}

class Converter {
 public:
  Converter(const YamlLimits& limits, SourceMap& map) : limits_(limits), map_(map) {}

  json::value Convert(const YAML::Node& node, const std::string& pointer, std::size_t depth, SourcePosition key_pos) {
    SourcePosition pos = PositionOf(node.Mark());
    if (++nodes_ > limits_.max_nodes) {
      throw ConvertError{
          {pos, "document has more than " + std::to_string(limits_.max_nodes) + " nodes (after expanding aliases)"}};
    }
    if (depth > limits_.max_depth) {
      throw ConvertError{{pos, "document nests deeper than " + std::to_string(limits_.max_depth) + " levels"}};
    }
    map_.Add(pointer, pos, key_pos);
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        return Scalar(node, pos);
      case YAML::NodeType::Sequence: {
        json::array out;
        out.reserve(node.size());
        std::size_t i = 0;
        for (const auto& item : node) {
          out.push_back(Convert(item, AppendPointer(pointer, std::to_string(i++)), depth + 1, {}));
        }
        return out;
      }
      case YAML::NodeType::Map: {
        json::object out;
        std::unordered_set<std::string> seen;
        for (const auto& kv : node) {
          SourcePosition kpos = PositionOf(kv.first.Mark());
          if (!kv.first.IsScalar()) {
            throw ConvertError{{kpos, "mapping keys must be scalars"}};
          }
          const std::string& key = kv.first.Scalar();
          CheckUtf8(key, kpos, "this key");
          if (!seen.insert(key).second) {
            throw ConvertError{{kpos, "duplicate key \"" + key + "\""}};
          }
          out[key] = Convert(kv.second, AppendPointer(pointer, key), depth + 1, kpos);
        }
        return out;
      }
    }
    return nullptr;
  }

 private:
  static json::value Scalar(const YAML::Node& node, SourcePosition pos) {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    CheckUtf8(text, pos, "this value");
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return json::string(text);
    return ResolvePlainScalar(text, pos);
  }

  const YamlLimits& limits_;
  SourceMap& map_;
  std::size_t nodes_ = 0;
};

}  // namespace

std::expected<YamlDocument, YamlError> ParseYaml(std::string_view text, const YamlLimits& limits) {
  YamlDocument doc;
  try {
    // Load would read the first node and drop whatever follows it (`{...}` then `key: 1` on the
    // next line loaded as the mapping alone): a file holds one document, and anything after it is
    // an error where it starts.
    std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    if (documents.size() > 1) {
      return std::unexpected(YamlError{PositionOf(documents[1].Mark()),
                                       "a second YAML document starts here; a file holds one (remove what "
                                       "follows the first, or a stray '---')"});
    }
    YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
    Converter converter(limits, doc.positions);
    doc.value = converter.Convert(root, "", 0, {});
  } catch (const YAML::Exception& e) {
    return std::unexpected(YamlError{PositionOf(e.mark), e.msg});
  } catch (const ConvertError& e) {
    return std::unexpected(e.error);
  }
  return doc;
}

}  // namespace skillrunner
