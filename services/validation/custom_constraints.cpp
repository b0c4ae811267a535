#include "services/validation/custom_constraints.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <optional>
#include <unordered_map>
#include <valijson/constraint_builder.hpp>
#include <valijson/constraints/concrete_constraints.hpp>
#include <valijson/internal/adapter.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>

#include "services/validation/formats.h"

namespace skillrunner::validation {
namespace {

using valijson::ValidationResults;
using valijson::adapters::Adapter;
using Context = std::vector<std::string>;

// Supplies PolyConstraint's cloning boilerplate for a copyable Derived.
template <typename Derived>
class Cloneable : public valijson::constraints::PolyConstraint {
 private:
  valijson::constraints::Constraint* cloneInto(void* memory) const override {
    return new (memory) Derived(static_cast<const Derived&>(*this));
  }
  size_t sizeOf() const override { return sizeof(Derived); }
};

// Always passes; records where a subschema's errors start and end.
class MarkConstraint : public Cloneable<MarkConstraint> {
 public:
  explicit MarkConstraint(std::string description) : description_(std::move(description)) {}
  bool validate(const Adapter&, const Context& context, ValidationResults* results) const override {
    if (results != nullptr) results->pushError(context, description_);
    return true;
  }

 private:
  std::string description_;
};

class FormatConstraint : public Cloneable<FormatConstraint> {
 public:
  explicit FormatConstraint(std::string format) : format_(std::move(format)) {}
  bool validate(const Adapter& target, const Context& context, ValidationResults* results) const override {
    std::string text;
    if (!target.isString() || !target.getString(text)) return true;
    if (CheckFormat(format_, text)) return true;
    if (results != nullptr) results->pushError(context, std::string(kFormatTag));
    return false;
  }

 private:
  std::string format_;
};

// "type": "integer" is checked as "number" plus this, so that 30.0 counts as
// an integer (valijson only accepts int64 values).
class IntegerConstraint : public Cloneable<IntegerConstraint> {
 public:
  bool validate(const Adapter& target, const Context& context, ValidationResults* results) const override {
    if (!target.isNumber() || target.isInteger()) return true;
    double value = 0;
    if (target.getDouble(value) && std::isfinite(value) && std::trunc(value) == value) {
      return true;
    }
    if (results != nullptr) results->pushError(context, std::string(kIntegerTag));
    return false;
  }
};

// valijson truncates a double before an integer multipleOf (4.5 passes
// multipleOf 2); this checks integers exactly and doubles within rounding.
class MultipleOfConstraint : public Cloneable<MultipleOfConstraint> {
 public:
  MultipleOfConstraint(bool is_integer, int64_t int_divisor, double divisor)
      : is_integer_(is_integer), int_divisor_(int_divisor), divisor_(divisor) {}
  bool validate(const Adapter& target, const Context& context, ValidationResults* results) const override {
    if (!target.isNumber() || Passes(target)) return true;
    if (results != nullptr) results->pushError(context, std::string(kMultipleOfTag));
    return false;
  }

 private:
  bool Passes(const Adapter& target) const {
    int64_t int_value = 0;
    if (is_integer_ && target.isInteger() && target.getInteger(int_value)) {
      return int_divisor_ != 0 && int_value % int_divisor_ == 0;
    }
    double value = 0;
    if (!target.getNumber(value)) return true;
    const double quotient = value / divisor_;
    if (!std::isfinite(quotient)) return false;
    return std::fabs(quotient - std::round(quotient)) <= 1e-9 * std::max(1.0, std::fabs(quotient));
  }

  bool is_integer_;
  int64_t int_divisor_;
  double divisor_;
};

// Appends a text two values share exactly when JSON Schema calls them equal:
// 1 and 1.0 alike, object members in any order.
void AppendCanonical(const Adapter& value, std::string& out) {
  int64_t integer = 0;
  double number = 0;
  if (value.isNull()) {
    out += 'z';
  } else if (value.isBool()) {
    out += value.getBool() ? 't' : 'f';
  } else if (value.isInteger() && value.getInteger(integer)) {
    out += 'i' + std::to_string(integer);
  } else if (value.isNumber() && value.getNumber(number)) {
    if (std::trunc(number) == number && std::fabs(number) < 9.2e18) {
      out += 'i' + std::to_string(static_cast<int64_t>(number));
    } else {
      char text[32];
      std::snprintf(text, sizeof text, "d%.17g", number);
      out += text;
    }
  } else if (value.isString()) {
    std::string text = value.getString();
    out += 's' + std::to_string(text.size()) + ':' + text;
  } else if (value.isArray()) {
    out += '[';
    value.applyToArray([&out](const Adapter& item) {
      AppendCanonical(item, out);
      out += ',';
      return true;
    });
    out += ']';
  } else if (value.isObject()) {
    std::vector<std::string> members;
    value.applyToObject([&members](const std::string& key, const Adapter& member) {
      std::string text = std::to_string(key.size()) + ':' + key;
      AppendCanonical(member, text);
      members.push_back(std::move(text));
      return true;
    });
    std::sort(members.begin(), members.end());
    out += '{';
    for (const auto& member : members) out += member + ',';
    out += '}';
  }
}

// valijson compares every pair of items and reports every equal pair: an
// array of n equal items gave n(n-1)/2 errors (1,600 nulls in a schema's
// "required": 176 MB of diagnostics). This hashes each item once and reports
// the first repeat only.
class UniqueItemsConstraint : public Cloneable<UniqueItemsConstraint> {
 public:
  explicit UniqueItemsConstraint(bool unique) : unique_(unique) {}
  bool validate(const Adapter& target, const Context& context, ValidationResults* results) const override {
    if (!unique_ || !target.isArray()) return true;
    std::unordered_map<std::string, std::size_t> seen;
    std::size_t index = 0;
    std::optional<std::pair<std::size_t, std::size_t>> repeat;
    target.applyToArray([&](const Adapter& item) {
      std::string key;
      AppendCanonical(item, key);
      auto [it, inserted] = seen.emplace(std::move(key), index);
      if (!inserted) repeat.emplace(it->second, index);
      ++index;
      return !repeat;
    });
    if (!repeat) return true;
    if (results != nullptr) {
      results->pushError(
          context, std::string(kUniqueItemsTag) + std::to_string(repeat->first) + " " + std::to_string(repeat->second));
    }
    return false;
  }

 private:
  bool unique_;
};

class MarkBuilder : public valijson::ConstraintBuilder {
 public:
  explicit MarkBuilder(std::string_view tag) : tag_(tag) {}
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    int64_t id = 0;
    if (!node.getInteger(id)) valijson::throwRuntimeError("internal: bad subschema mark");
    return new MarkConstraint(tag_ + std::to_string(id));
  }

 private:
  std::string tag_;
};

class FormatBuilder : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    std::string format;
    if (!node.getString(format)) valijson::throwRuntimeError("'format' must be a string");
    return new FormatConstraint(format);
  }
};

class IntegerBuilder : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter&) const override { return new IntegerConstraint(); }
};

class MultipleOfBuilder : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    double divisor = 0;
    if (!node.getNumber(divisor) || !(divisor > 0)) {
      valijson::throwRuntimeError("'multipleOf' must be a number greater than 0");
    }
    int64_t int_divisor = 0;
    bool is_integer = node.isInteger() && node.getInteger(int_divisor);
    return new MultipleOfConstraint(is_integer, int_divisor, divisor);
  }
};

class UniqueItemsBuilder : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    bool unique = false;
    if (!node.getBool(unique)) valijson::throwRuntimeError("'uniqueItems' must be a boolean");
    return new UniqueItemsConstraint(unique);
  }
};

}  // namespace

void AddCustomConstraints(valijson::SchemaParser& parser) {
  // Custom constraints run after the built-in ones, in this order; the leave
  // mark must come last so that it closes everything its subschema reported.
  parser.addConstraintBuilder(std::string(kFormatKeyword), new FormatBuilder());
  parser.addConstraintBuilder(std::string(kIntegerKeyword), new IntegerBuilder());
  parser.addConstraintBuilder(std::string(kMultipleOfKeyword), new MultipleOfBuilder());
  parser.addConstraintBuilder(std::string(kUniqueItemsKeyword), new UniqueItemsBuilder());
  parser.addConstraintBuilder(std::string(kEnterKeyword), new MarkBuilder(kEnterTag));
  parser.addConstraintBuilder(std::string(kLeaveKeyword), new MarkBuilder(kLeaveTag));
}

}  // namespace skillrunner::validation
