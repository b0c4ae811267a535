#include "services/providers/simulated/regex_sample.h"

#include <cstddef>
#include <map>
#include <regex>
#include <utility>
#include <vector>

#include "services/common/regex_guard.h"

namespace skillrunner::providers::simulation {
namespace {

constexpr int kMaxExtraRepeats = 3;   // * and + add at most this many
constexpr int kMaxBoundedSpread = 8;  // {m,n} picks within m..m+8
constexpr int kMaxNesting = 32;

struct Node {
  enum class Kind { kChars, kSequence, kAlternation, kRepeat, kStart, kEnd };
  Kind kind = Kind::kSequence;
  std::vector<std::pair<char, char>> ranges;  // kChars: inclusive ranges
  bool negated = false;                       // kChars: [^...]
  std::vector<Node> children;
  int min = 0;
  int max = 0;  // -1: unbounded
};

Node Chars(std::vector<std::pair<char, char>> ranges, bool negated = false) {
  Node node;
  node.kind = Node::Kind::kChars;
  node.ranges = std::move(ranges);
  node.negated = negated;
  return node;
}

const std::vector<std::pair<char, char>> kDigits = {{'0', '9'}};
const std::vector<std::pair<char, char>> kWord = {{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'_', '_'}};
const std::vector<std::pair<char, char>> kSpace = {{' ', ' '}, {'\t', '\t'}, {'\n', '\n'}};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::optional<Node> Parse() {
    auto node = Alternation(0);
    if (!node || pos_ != text_.size()) return std::nullopt;
    return node;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  std::optional<Node> Alternation(int nesting) {
    if (nesting > kMaxNesting) return std::nullopt;
    Node alt;
    alt.kind = Node::Kind::kAlternation;
    while (true) {
      auto seq = Sequence(nesting);
      if (!seq) return std::nullopt;
      alt.children.push_back(std::move(*seq));
      if (AtEnd() || Peek() != '|') break;
      ++pos_;
    }
    return alt;
  }

  std::optional<Node> Sequence(int nesting) {
    Node seq;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      auto atom = Atom(nesting);
      if (!atom) return std::nullopt;
      if (!Quantify(*atom)) return std::nullopt;
      seq.children.push_back(std::move(*atom));
    }
    return seq;
  }

  std::optional<Node> Atom(int nesting) {
    char c = text_[pos_++];
    switch (c) {
      case '(': {
        if (!AtEnd() && Peek() == '?') {
          if (pos_ + 1 >= text_.size() || text_[pos_ + 1] != ':') return std::nullopt;
          pos_ += 2;
        }
        auto inner = Alternation(nesting + 1);
        if (!inner || AtEnd() || Peek() != ')') return std::nullopt;
        ++pos_;
        return inner;
      }
      case '[':
        return Class();
      case '.':
        return Chars({{'a', 'z'}, {'0', '9'}});
      case '^': {
        Node node;
        node.kind = Node::Kind::kStart;
        return node;
      }
      case '$': {
        Node node;
        node.kind = Node::Kind::kEnd;
        return node;
      }
      case '\\':
        return Escape(false);
      case '*':
      case '+':
      case '?':
      case '{':
      case ')':
        return std::nullopt;
      default:
        return Chars({{c, c}});
    }
  }

  // After a backslash. Inside a class, \b is a backspace; outside, unsupported.
  std::optional<Node> Escape(bool in_class) {
    if (AtEnd()) return std::nullopt;
    char c = text_[pos_++];
    switch (c) {
      case 'd':
        return Chars(kDigits);
      case 'D':
        return Chars(kDigits, true);
      case 'w':
        return Chars(kWord);
      case 'W':
        return Chars(kWord, true);
      case 's':
        return Chars(kSpace);
      case 'S':
        return Chars(kSpace, true);
      case 'n':
        return Chars({{'\n', '\n'}});
      case 't':
        return Chars({{'\t', '\t'}});
      case 'r':
        return Chars({{'\r', '\r'}});
      default:
        break;
    }
    if (c == 'b' && in_class) return Chars({{'\b', '\b'}});
    bool letter_or_digit = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (letter_or_digit) return std::nullopt;  // \b \B \1 \u... : outside the subset
    return Chars({{c, c}});
  }

  std::optional<Node> Class() {
    Node node = Chars({});
    if (!AtEnd() && Peek() == '^') {
      node.negated = true;
      ++pos_;
    }
    while (!AtEnd() && Peek() != ']') {
      auto low = ClassAtom();
      if (!low) return std::nullopt;
      bool single = low->ranges.size() == 1 && low->ranges[0].first == low->ranges[0].second && !low->negated;
      if (single && pos_ + 1 < text_.size() && Peek() == '-' && text_[pos_ + 1] != ']') {
        ++pos_;
        auto high = ClassAtom();
        if (!high || high->ranges.size() != 1 || high->negated) return std::nullopt;
        char from = low->ranges[0].first;
        char to = high->ranges[0].second;
        if (to < from) return std::nullopt;
        node.ranges.emplace_back(from, to);
        continue;
      }
      if (low->negated) return std::nullopt;  // [\D] and the like: outside the subset
      node.ranges.insert(node.ranges.end(), low->ranges.begin(), low->ranges.end());
    }
    if (AtEnd()) return std::nullopt;
    ++pos_;  // ']'
    return node;
  }

  std::optional<Node> ClassAtom() {
    char c = text_[pos_++];
    if (c == '\\') return Escape(true);
    return Chars({{c, c}});
  }

  std::optional<int> Number() {
    int value = 0;
    std::size_t start = pos_;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      value = value * 10 + (Peek() - '0');
      if (value > 100000) return std::nullopt;
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    return value;
  }

  bool Quantify(Node& atom) {
    if (AtEnd()) return true;
    int min = 0;
    int max = 0;
    char c = Peek();
    if (c == '?') {
      min = 0, max = 1;
    } else if (c == '*') {
      min = 0, max = -1;
    } else if (c == '+') {
      min = 1, max = -1;
    } else if (c == '{') {
      ++pos_;
      auto low = Number();
      if (!low) return false;
      min = max = *low;
      if (!AtEnd() && Peek() == ',') {
        ++pos_;
        max = -1;
        if (!AtEnd() && Peek() != '}') {
          auto high = Number();
          if (!high || *high < min) return false;
          max = *high;
        }
      }
      if (AtEnd() || Peek() != '}') return false;
    } else {
      return true;
    }
    ++pos_;
    if (!AtEnd() && Peek() == '?') ++pos_;  // lazy: same language
    if (atom.kind == Node::Kind::kStart || atom.kind == Node::Kind::kEnd) return false;
    Node repeat;
    repeat.kind = Node::Kind::kRepeat;
    repeat.min = min;
    repeat.max = max;
    repeat.children.push_back(std::move(atom));
    atom = std::move(repeat);
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

bool InRanges(const std::vector<std::pair<char, char>>& ranges, char c) {
  for (const auto& [low, high] : ranges) {
    if (c >= low && c <= high) return true;
  }
  return false;
}

char PickChar(const Node& node, Rng& rng) {
  if (node.negated) {
    // Printable ASCII, letters first, outside the class.
    static constexpr std::string_view kCandidates =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:;!?@#%&*+=/ ()";
    std::string allowed;
    for (char c : kCandidates) {
      if (!InRanges(node.ranges, c)) allowed.push_back(c);
    }
    if (allowed.empty()) return '~';
    return allowed[rng.Below(allowed.size())];
  }
  std::uint64_t total = 0;
  for (const auto& [low, high] : node.ranges)
    total += static_cast<unsigned char>(high) - static_cast<unsigned char>(low) + 1U;
  if (total == 0) return 'a';
  std::uint64_t pick = rng.Below(total);
  for (const auto& [low, high] : node.ranges) {
    std::uint64_t size = static_cast<unsigned char>(high) - static_cast<unsigned char>(low) + 1U;
    if (pick < size) return static_cast<char>(static_cast<unsigned char>(low) + pick);
    pick -= size;
  }
  return node.ranges.front().first;
}

void Generate(const Node& node, Rng& rng, std::string& out) {
  switch (node.kind) {
    case Node::Kind::kChars:
      out.push_back(PickChar(node, rng));
      return;
    case Node::Kind::kSequence:
      for (const auto& child : node.children) Generate(child, rng, out);
      return;
    case Node::Kind::kAlternation:
      Generate(node.children[rng.Below(node.children.size())], rng, out);
      return;
    case Node::Kind::kRepeat: {
      int high = node.max < 0 ? node.min + kMaxExtraRepeats : std::min(node.max, node.min + kMaxBoundedSpread);
      auto count = rng.Between(node.min, high);
      for (std::int64_t i = 0; i < count; ++i) Generate(node.children.front(), rng, out);
      return;
    }
    case Node::Kind::kStart:
    case Node::Kind::kEnd:
      return;
  }
}

}  // namespace

bool RegexSearch(std::string_view pattern, std::string_view text) {
  thread_local std::map<std::string, std::optional<std::regex>, std::less<>> cache;
  auto found = cache.find(pattern);
  if (found == cache.end()) {
    if (cache.size() > 512) cache.clear();
    found = cache.emplace(std::string(pattern), CompileSchemaRegex(pattern)).first;
  }
  if (!found->second) return false;
  return std::regex_search(text.begin(), text.end(), *found->second);
}

std::optional<std::string> SampleRegex(std::string_view pattern, Rng& rng) {
  auto tree = Parser(pattern).Parse();
  if (!tree) return std::nullopt;
  std::string sample;
  Generate(*tree, rng, sample);
  if (!RegexSearch(pattern, sample)) return std::nullopt;
  return sample;
}

}  // namespace skillrunner::providers::simulation
