#include "services/validation/error_report.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <valijson/validation_results.hpp>

#include "services/validation/custom_constraints.h"
#include "services/validation/error_paths.h"
#include "services/validation/leaf_messages.h"
#include "services/validation/value_text.h"

namespace skillrunner::validation {
namespace {

using Tokens = std::vector<std::string>;

enum class Collapse { kNone, kAnyOf, kOneOfNone, kOneOfMany };

// The errors of one subschema visit, between its enter and leave marks.
struct Frame {
  int64_t id = -1;
  Tokens tokens;
  std::size_t start = 0;  // index in the output where its errors begin
  Collapse collapse = Collapse::kNone;
};

int64_t TagId(std::string_view description, std::string_view tag) {
  int64_t id = -1;
  std::string_view digits = description.substr(tag.size());
  std::from_chars(digits.data(), digits.data() + digits.size(), id);
  return id;
}

// The number after '#' in "Failed to validate item #3 ...".
std::string ItemIndex(std::string_view description) {
  auto hash = description.find('#');
  if (hash == std::string_view::npos) return {};
  auto end = description.find(' ', hash);
  return std::string(description.substr(hash + 1, end - hash - 1));
}

std::string PropertyName(std::string_view description) {
  auto open = description.find('\'');
  auto close = description.rfind('\'');
  if (open == std::string_view::npos || close <= open) return {};
  return std::string(description.substr(open + 1, close - open - 1));
}

std::string CollapsedMessage(Collapse collapse, const boost::json::value* found) {
  const std::string what = found != nullptr ? DescribeTypedValue(*found) : std::string("a value");
  switch (collapse) {
    case Collapse::kAnyOf:
      return "expected a value matching at least one anyOf branch, found " + what;
    case Collapse::kOneOfNone:
      return "expected a value matching exactly one oneOf branch, found " + what + " matching none";
    default:
      return "expected a value matching exactly one oneOf branch, found " + what + " matching more than one";
  }
}

bool TypeAdmits(std::string_view type, const boost::json::value& found) {
  if (type == JsonTypeName(found)) return true;
  if (type != "integer" || !found.is_number()) return false;
  if (!found.is_double()) return true;
  const double d = found.get_double();
  return std::isfinite(d) && std::trunc(d) == d;
}

// When every branch of an anyOf/oneOf states its types and none admits the
// found value, "expected number or null" says more than "no branch matched".
std::optional<std::string> BranchTypes(const boost::json::object* owner, const boost::json::value* found) {
  if (owner == nullptr || found == nullptr) return std::nullopt;
  const boost::json::value* branches = owner->if_contains("anyOf");
  if (branches == nullptr) branches = owner->if_contains("oneOf");
  if (branches == nullptr || !branches->is_array()) return std::nullopt;
  boost::json::array names;
  for (const auto& branch : branches->get_array()) {
    const auto* object = branch.if_object();
    if (object == nullptr) return std::nullopt;
    const boost::json::value* type = object->if_contains(kOriginalTypeKeyword);
    if (type == nullptr) type = object->if_contains("type");
    if (type == nullptr) return std::nullopt;
    boost::json::array list = type->is_array() ? type->get_array() : boost::json::array{*type};
    for (const auto& name : list) {
      if (!name.is_string()) return std::nullopt;
      if (TypeAdmits(name.get_string(), *found)) return std::nullopt;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return "expected " + DescribeTypes(names) + ", found " + DescribeTypedValue(*found);
}

class Reporter {
 public:
  Reporter(const std::vector<const boost::json::object*>& nodes, const boost::json::value& instance, bool draft4)
      : nodes_(nodes), instance_(instance), draft4_(draft4) {}

  void Add(const valijson::ValidationResults::Error& error) {
    std::string_view d = error.description;
    Tokens tokens = ContextTokens(error.context);
    if (d.starts_with(kEnterTag)) {
      frames_.push_back({TagId(d, kEnterTag), tokens, out_.size(), Collapse::kNone});
    } else if (d.starts_with(kLeaveTag)) {
      Leave(TagId(d, kLeaveTag));
    } else if (d.starts_with("Failed to validate against any schemas allowed by anyOf")) {
      MarkCollapse(Collapse::kAnyOf, tokens);
    } else if (d.starts_with("Failed to validate against any child schemas allowed by oneOf")) {
      MarkCollapse(Collapse::kOneOfNone, tokens);
    } else if (d.starts_with("Failed to validate against exactly one child schema")) {
      MarkCollapse(Collapse::kOneOfMany, tokens);
    } else if (!Wrapper(d, tokens)) {
      const boost::json::object* owner = frames_.empty() ? nullptr : Node(frames_.back().id);
      AppendLeafErrors(Leaf{d, tokens, owner, instance_, draft4_}, out_);
    }
    previous_ = error;
  }

  std::vector<FieldError> Finish() {
    std::vector<FieldError> unique;
    std::set<std::pair<std::string, std::string>> seen;
    for (auto& error : out_) {
      if (seen.insert({error.path, error.message}).second) unique.push_back(std::move(error));
    }
    if (unique.empty()) unique.push_back({"", "value does not match the schema"});
    return unique;
  }

 private:
  const boost::json::object* Node(int64_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < nodes_.size() ? nodes_[id] : nullptr;
  }

  void Leave(int64_t id) {
    while (!frames_.empty()) {
      Frame frame = std::move(frames_.back());
      frames_.pop_back();
      if (frame.collapse != Collapse::kNone) {
        out_.resize(std::min(out_.size(), frame.start));
        const boost::json::value* found = FindByTokens(instance_, frame.tokens);
        auto by_type = frame.collapse == Collapse::kOneOfMany ? std::nullopt : BranchTypes(Node(frame.id), found);
        out_.push_back({MakePointer(frame.tokens), by_type ? *by_type : CollapsedMessage(frame.collapse, found)});
      }
      if (frame.id == id) return;
    }
  }

  void MarkCollapse(Collapse collapse, const Tokens& tokens) {
    if (!frames_.empty() && frames_.back().tokens == tokens) {
      frames_.back().collapse = collapse;
      return;
    }
    out_.push_back({MakePointer(tokens), CollapsedMessage(collapse, FindByTokens(instance_, tokens))});
  }

  // Whether the subschema for `child` reported its own errors: its leave mark
  // comes right before the wrapper. If not, it was the `false` schema.
  bool ChildReported(const Tokens& child) const {
    return std::string_view(previous_.description).starts_with(kLeaveTag) && ContextTokens(previous_.context) == child;
  }

  // Drops valijson's per-level wrappers; reports a `false` subschema, which
  // has nothing below the wrapper.
  bool Wrapper(std::string_view d, const Tokens& tokens) {
    Tokens child = tokens;
    if (d.starts_with("Failed to validate against schema associated with property name")) {
      child.push_back(PropertyName(d));
      if (!ChildReported(child)) {
        out_.push_back(
            {MakePointer(child), "unexpected property " + boost::json::serialize(boost::json::value(child.back()))});
      }
      return true;
    }
    if (d.starts_with("Failed to validate item #")) {
      if (d.find("corresponding item schema") == std::string_view::npos) child.push_back(ItemIndex(d));
      if (!ChildReported(child)) NotAllowed(child);
      return true;
    }
    if (d.starts_with("Failed to validate against child schema #")) {
      if (!ChildReported(child)) NotAllowed(child);
      return true;
    }
    return d.starts_with("Failed to validate against schema associated with pattern") ||
           d.starts_with("Failed to validate against additional properties schema") ||
           d.starts_with("Failed to validate against dependent schema") ||
           d.starts_with("Failed to validate against a conditional schema");
  }

  void NotAllowed(const Tokens& at) {
    const boost::json::value* found = FindByTokens(instance_, at);
    out_.push_back({MakePointer(at),
                    "no value is allowed here, found " + (found != nullptr ? DescribeTypedValue(*found) : "a value")});
  }

  const std::vector<const boost::json::object*>& nodes_;
  const boost::json::value& instance_;
  bool draft4_;
  std::vector<Frame> frames_;
  std::vector<FieldError> out_;
  valijson::ValidationResults::Error previous_;
};

}  // namespace

std::vector<FieldError> BuildReport(const valijson::ValidationResults& results,
                                    const std::vector<const boost::json::object*>& nodes,
                                    const boost::json::value& instance, bool draft4) {
  Reporter reporter(nodes, instance, draft4);
  for (const auto& error : results) reporter.Add(error);
  return reporter.Finish();
}

}  // namespace skillrunner::validation
