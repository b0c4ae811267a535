// Strings and numbers for InstanceGenerator: schema bounds first, then a
// plausible value for the property name.

#include <algorithm>
#include <boost/json/object.hpp>
#include <cmath>
#include <limits>

#include "services/providers/simulated/instance_edit.h"
#include "services/providers/simulated/regex_sample.h"
#include "services/providers/simulated/schema_instance.h"

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

constexpr int kPatternTries = 12;
constexpr double kMagnitude = 1e15;  // keeps integers exact in a double
constexpr std::string_view kFiller = " lorem ipsum dolor sit amet consectetur adipiscing elit";

const json::value* Member(const json::object& object, std::string_view key) { return object.if_contains(key); }

std::optional<std::int64_t> Length(const json::object& schema, std::string_view key) {
  const json::value* value = Member(schema, key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return static_cast<std::int64_t>(std::clamp(value->to_number<double>(), 0.0, 1e6));
}

// Cuts or pads (ASCII) `text` to lie within [low, high] code points.
std::string FitLength(std::string text, std::int64_t low, std::optional<std::int64_t> high) {
  if (high && CodePoints(text) > *high) {
    std::string cut;
    std::int64_t count = 0;
    for (unsigned char c : text) {
      if ((c & 0xC0U) != 0x80U && ++count > *high) break;
      cut.push_back(static_cast<char>(c));
    }
    text = std::move(cut);
    while (!text.empty() && text.back() == ' ' && CodePoints(text) > low) text.pop_back();
  }
  std::size_t next = text.empty() ? 1 : 0;  // no leading blank
  while (CodePoints(text) < low) {
    text.push_back(kFiller[next]);
    next = next + 1 < kFiller.size() ? next + 1 : 1;
  }
  if (!text.empty() && text.back() == ' ' && CodePoints(text) > low) text.pop_back();
  if (!text.empty() && text.back() == ' ') text.back() = 'x';
  return text;
}

json::value NumberValue(double number) {
  if (std::floor(number) == number && std::fabs(number) <= kMagnitude) {
    return static_cast<std::int64_t>(number);
  }
  return number;
}

struct Bounds {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  bool low_exclusive = false;
  bool high_exclusive = false;
};

Bounds ReadBounds(const json::object& schema) {
  Bounds b;
  if (const auto* v = Member(schema, "minimum"); v && v->is_number()) b.low = v->to_number<double>();
  if (const auto* v = Member(schema, "maximum"); v && v->is_number()) b.high = v->to_number<double>();
  if (const auto* v = Member(schema, "exclusiveMinimum")) {
    if (v->is_bool()) b.low_exclusive = v->get_bool();  // draft 4
    if (v->is_number() && v->to_number<double>() >= b.low) {
      b.low = v->to_number<double>();
      b.low_exclusive = true;
    }
  }
  if (const auto* v = Member(schema, "exclusiveMaximum")) {
    if (v->is_bool()) b.high_exclusive = v->get_bool();
    if (v->is_number() && v->to_number<double>() <= b.high) {
      b.high = v->to_number<double>();
      b.high_exclusive = true;
    }
  }
  return b;
}

// A default range for an unbounded number, by property name.
std::pair<double, double> DefaultRange(std::string_view name) {
  if (name.find("age") != std::string_view::npos) return {18, 90};
  if (name.find("year") != std::string_view::npos) return {1990, 2030};
  if (name.find("priority") != std::string_view::npos) return {1, 5};
  if (name.find("count") != std::string_view::npos || name.find("quantity") != std::string_view::npos) {
    return {1, 20};
  }
  if (name.find("price") != std::string_view::npos || name.find("amount") != std::string_view::npos) {
    return {1, 500};
  }
  return {0, 100};
}

bool Within(const Bounds& b, double v) {
  bool above = b.low_exclusive ? v > b.low : v >= b.low;
  bool below = b.high_exclusive ? v < b.high : v <= b.high;
  return above && below;
}

}  // namespace

json::value GenerateString(const json::object& schema, std::string_view name, Rng& rng) {
  std::int64_t low = Length(schema, "minLength").value_or(0);
  std::optional<std::int64_t> high = Length(schema, "maxLength");
  const json::value* pattern = Member(schema, "pattern");
  std::string_view regex = pattern && pattern->is_string() ? std::string_view(pattern->get_string()) : "";
  auto fits = [&](const std::string& text) {
    std::int64_t length = CodePoints(text);
    return length >= low && (!high || length <= *high) && (regex.empty() || RegexSearch(regex, text));
  };
  const json::value* format = Member(schema, "format");
  if (format != nullptr && format->is_string()) {
    if (auto sample = FormatSample(format->get_string(), name, rng); sample && fits(*sample)) {
      return json::value(*sample);
    }
  }
  if (!regex.empty()) {
    // A plausible text that happens to match beats a random sample.
    if (auto text = PlausibleText(name, rng); text && fits(*text)) return json::value(*text);
    for (int i = 0; i < kPatternTries; ++i) {
      auto sample = SampleRegex(regex, rng);
      if (!sample) break;
      if (fits(*sample)) return json::value(*sample);
    }
  }
  std::string text = PlausibleText(name, rng).value_or("");
  if (text.empty()) text = Word(rng);
  return json::value(FitLength(std::move(text), low, high));
}

json::value GenerateNumber(const json::object& schema, bool integer, std::string_view name, Rng& rng) {
  Bounds b = ReadBounds(schema);
  bool has_low = std::isfinite(b.low);
  bool has_high = std::isfinite(b.high);
  if (!has_low && !has_high) {
    auto [low, high] = DefaultRange(name);
    b.low = low, b.high = high;
  } else if (!has_low) {
    b.low = b.high - 100;
  } else if (!has_high) {
    b.high = b.low + 100;
  }
  b.low = std::max(b.low, -kMagnitude);
  b.high = std::min(b.high, kMagnitude);
  double step = 0;
  if (const auto* m = Member(schema, "multipleOf"); m && m->is_number() && m->to_number<double>() > 0) {
    step = m->to_number<double>();
  }
  if (step > 0) {
    auto k_low = static_cast<std::int64_t>(std::ceil(b.low / step));
    auto k_high = static_cast<std::int64_t>(std::floor(b.high / step));
    for (int tries = 0; tries < 16 && k_low <= k_high; ++tries) {
      std::int64_t k = rng.Between(k_low, std::min(k_high, k_low + 1000));
      double v = static_cast<double>(k) * step;
      if (std::floor(step) == step) v = static_cast<double>(k * static_cast<std::int64_t>(step));
      if (Within(b, v) && (!integer || std::floor(v) == v)) return NumberValue(v);
    }
    return NumberValue(static_cast<double>(k_low) * step);
  }
  double int_low = b.low_exclusive ? std::floor(b.low) + 1 : std::ceil(b.low);
  double int_high = b.high_exclusive ? std::ceil(b.high) - 1 : std::floor(b.high);
  bool integer_fits = int_low <= int_high;
  if (integer || (integer_fits && rng.Chance(3, 4))) {
    if (!integer_fits) return NumberValue(int_low);
    return rng.Between(static_cast<std::int64_t>(int_low), static_cast<std::int64_t>(int_high));
  }
  double v = std::round((b.low + (b.high - b.low) * rng.Unit()) * 100) / 100;
  if (!Within(b, v)) v = b.low + (b.high - b.low) / 2;
  return NumberValue(v);
}

}  // namespace skillrunner::providers::simulation
