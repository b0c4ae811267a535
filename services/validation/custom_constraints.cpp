#include "services/validation/custom_constraints.h"

#include <cmath>
#include <new>
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
  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
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
  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
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
  bool validate(const Adapter& target, const Context& context,
                ValidationResults* results) const override {
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
  valijson::constraints::Constraint* make(const Adapter&) const override {
    return new IntegerConstraint();
  }
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

}  // namespace

void AddCustomConstraints(valijson::SchemaParser& parser) {
  // Custom constraints run after the built-in ones, in this order; the leave
  // mark must come last so that it closes everything its subschema reported.
  parser.addConstraintBuilder(std::string(kFormatKeyword), new FormatBuilder());
  parser.addConstraintBuilder(std::string(kIntegerKeyword), new IntegerBuilder());
  parser.addConstraintBuilder(std::string(kMultipleOfKeyword), new MultipleOfBuilder());
  parser.addConstraintBuilder(std::string(kEnterKeyword), new MarkBuilder(kEnterTag));
  parser.addConstraintBuilder(std::string(kLeaveKeyword), new MarkBuilder(kLeaveTag));
}

}  // namespace skillrunner::validation
