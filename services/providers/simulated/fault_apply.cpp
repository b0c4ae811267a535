#include "services/providers/simulated/fault_apply.h"

#include <algorithm>
#include <array>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>

#include "services/providers/simulated/instance_edit.h"

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

using Tokens = std::vector<std::string>;

constexpr std::string_view kRefusal = "I can't help with that.";

bool Has(const Fault& fault, FaultKind kind) { return fault.kind == kind; }

std::string Spell(const json::value& number) {
  static constexpr std::array<std::string_view, 11> kWords = {"zero", "one",   "two",   "three", "four", "five",
                                                              "six",  "seven", "eight", "nine",  "ten"};
  double v = number.to_number<double>();
  if (v >= 0 && v <= 10 && std::floor(v) == v) return std::string(kWords[static_cast<std::size_t>(v)]);
  return json::serialize(number);
}

// A value of another JSON type than the schema allows (wrong_type).
json::value OtherType(const json::value& current, const std::vector<std::string>& accepted) {
  auto allows = [&](std::string_view type) {
    return std::find(accepted.begin(), accepted.end(), type) != accepted.end();
  };
  std::vector<json::value> candidates;
  if (current.is_number()) {
    candidates = {json::value(Spell(current)), json::value(true)};
  } else if (current.is_string()) {
    candidates = {json::value(42), json::value(true)};
  } else if (current.is_bool()) {
    candidates = {json::value("yes"), json::value(1)};
  } else if (current.is_null()) {
    candidates = {json::value("none"), json::value(0)};
  } else {
    candidates = {json::value("see above"), json::value(0)};
  }
  candidates.emplace_back(json::array{});
  for (auto& candidate : candidates) {
    std::string_view type = candidate.is_string()  ? "string"
                            : candidate.is_bool()  ? "boolean"
                            : candidate.is_array() ? "array"
                                                   : "integer";
    bool accepted_here = allows(type) || (type == "integer" && allows("number"));
    if (!accepted_here) return candidate;
  }
  return candidates.front();
}

void WrongType(const Tokens& tokens, json::value& answer, InstanceGenerator& generator) {
  const json::value* schema = generator.walker().SchemaAt(tokens);
  json::value* target = Find(answer, tokens);
  json::value current = target != nullptr ? *target : json::value(nullptr);
  if (target == nullptr && schema != nullptr) current = generator.GenerateFor(*schema, "", 0);
  std::vector<std::string> accepted =
      schema != nullptr ? AcceptedTypes(generator.walker(), *schema) : std::vector<std::string>{};
  Put(answer, tokens, OtherType(current, accepted));
}

// Breaks one bound of `schema` at `value`; false when it has none for the value's type.
bool BreakBound(const json::object& schema, json::value& value) {
  auto number = [&](std::string_view key) -> std::optional<double> {
    const json::value* v = schema.if_contains(key);
    if (v == nullptr || !v->is_number()) return std::nullopt;
    return v->to_number<double>();
  };
  auto put_number = [&](double v) {
    value = std::floor(v) == v && std::fabs(v) < 9e15 ? json::value(static_cast<std::int64_t>(v)) : json::value(v);
  };
  if (value.is_number()) {
    if (auto max = number("maximum")) return put_number(*max + 1), true;
    if (auto max = number("exclusiveMaximum")) return put_number(*max), true;
    if (auto min = number("minimum")) return put_number(*min - 1), true;
    if (auto min = number("exclusiveMinimum")) return put_number(*min), true;
    return false;
  }
  if (value.is_string()) {
    if (auto max = number("maxLength")) {
      std::string text(value.get_string());
      while (static_cast<double>(CodePoints(text)) <= *max) text.push_back('x');
      value = text;
      return true;
    }
    if (auto min = number("minLength"); min && *min > 0) return value = "", true;
    return false;
  }
  if (value.is_array()) {
    if (auto max = number("maxItems")) {
      json::array& items = value.get_array();
      json::value filler = items.empty() ? json::value(nullptr) : items.back();
      while (static_cast<double>(items.size()) <= *max) items.push_back(filler);
      return true;
    }
    if (auto min = number("minItems"); min && *min > 0) return value = json::array(), true;
  }
  return false;
}

// Depth first, the first value whose schema bounds it.
bool BreakFirstBound(const SchemaWalker& walker, const json::value& schema, json::value& value, Tokens& tokens,
                     int depth) {
  json::object storage;
  const json::object* effective = walker.Effective(schema, storage);
  if (effective == nullptr || depth > kMaxDepth) return false;
  if (BreakBound(*effective, value)) return true;
  if (value.is_object()) {
    for (auto& member : value.get_object()) {
      const json::value* child = walker.ChildSchema(schema, member.key());
      tokens.emplace_back(member.key());
      if (child != nullptr && BreakFirstBound(walker, *child, member.value(), tokens, depth + 1)) return true;
      tokens.pop_back();
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.get_array().size(); ++i) {
      const json::value* child = walker.ChildSchema(schema, std::to_string(i));
      tokens.push_back(std::to_string(i));
      if (child != nullptr && BreakFirstBound(walker, *child, value.get_array()[i], tokens, depth + 1)) return true;
      tokens.pop_back();
    }
  }
  return false;
}

void OutOfRange(const Fault& fault, json::value& answer, InstanceGenerator& generator) {
  const SchemaWalker& walker = generator.walker();
  Tokens tokens;
  if (!fault.path) {
    if (!walker.root().is_null() && BreakFirstBound(walker, walker.root(), answer, tokens, 0)) return;
    WrongType(DefaultTokens(walker, answer), answer, generator);
    return;
  }
  ParsePointer(*fault.path, tokens);
  json::value* target = Find(answer, tokens);
  const json::value* schema = walker.SchemaAt(tokens);
  json::object storage;
  const json::object* effective = schema != nullptr ? walker.Effective(*schema, storage) : nullptr;
  if (target != nullptr && effective != nullptr && BreakBound(*effective, *target)) return;
  WrongType(tokens, answer, generator);
}

void ExtraField(const Fault& fault, json::value& answer, InstanceGenerator& generator) {
  Tokens tokens;
  if (fault.path) {
    ParsePointer(*fault.path, tokens);
  } else {
    const json::value* known = generator.walker().root().is_object()
                                   ? generator.walker().root().get_object().if_contains("properties")
                                   : nullptr;
    std::string key = "comment";
    for (int n = 2; (known && known->is_object() && known->get_object().contains(key)) ||
                    (answer.is_object() && answer.get_object().contains(key));
         ++n) {
      key = "comment_" + std::to_string(n);
    }
    tokens.push_back(key);
  }
  if (tokens.empty()) return;
  Put(answer, tokens, json::value("Added for context."));
}

void Verdict(const Fault& fault, json::value& answer) {
  json::array* results = JudgeResults(answer);
  if (results == nullptr) return;
  double confidence = fault.confidence.value_or(fault.verdict == "indeterminate" ? 30 : 90);
  for (auto& item : *results) {
    if (!item.is_object()) continue;
    json::object& result = item.get_object();
    const json::value* id = result.if_contains("criterion_id");
    std::string name = id != nullptr && id->is_string() ? std::string(id->get_string()) : "";
    if (!fault.criterion.empty() && name != fault.criterion) continue;
    result["verdict"] = fault.verdict;
    result["confidence"] = std::floor(confidence) == confidence ? json::value(static_cast<std::int64_t>(confidence))
                                                                : json::value(confidence);
    if (result.contains("reasoning")) {
      result["reasoning"] =
          fault.verdict == "pass" ? "The output satisfies \"" + name + "\"."
          : fault.verdict == "fail"
              ? "The output does not satisfy \"" + name + "\": a detail is not supported by the input."
              : "It cannot be decided from the input whether the output satisfies \"" + name + "\".";
    }
  }
  SummariseVerdict(answer);
}

// Cuts `text` near its middle, on a UTF-8 boundary.
std::string CutInMiddle(const std::string& text) {
  std::size_t cut = std::max<std::size_t>(1, text.size() / 2);
  while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) ++cut;
  return text.substr(0, std::min(cut, text.size()));
}

}  // namespace

std::optional<ProviderError> ErrorFault(const std::vector<Fault>& faults) {
  for (const auto& fault : faults) {
    if (fault.kind != FaultKind::kRateLimit && fault.kind != FaultKind::kUnavailable) continue;
    ProviderError error;
    error.kind = ProviderError::Kind::kHttp;
    error.retryable = true;
    if (fault.kind == FaultKind::kRateLimit) {
      error.http_status = 429;
      error.retry_after = fault.retry_after.value_or(std::chrono::milliseconds(1000));
    } else {
      error.http_status = fault.status != 0 ? fault.status : 503;
      error.retry_after = fault.retry_after;
    }
    int s = error.http_status;
    error.type = s == 429   ? "rate_limit_error"
                 : s == 529 ? "overloaded_error"
                 : s == 408 ? "timeout_error"
                 : s == 409 ? "conflict_error"
                            : "server_error";
    error.message = s == 429 ? "Rate limit reached (simulated fault)."
                             : "Service unavailable (simulated fault, HTTP " + std::to_string(s) + ").";
    error.raw_body =
        json::serialize(json::object{{"error", json::object{{"type", error.type}, {"message", error.message}}}});
    return error;
  }
  return std::nullopt;
}

void ApplyValueFaults(const std::vector<Fault>& faults, json::value& answer, InstanceGenerator& generator) {
  for (const auto& fault : faults) {
    Tokens tokens;
    if (fault.path) ParsePointer(*fault.path, tokens);
    switch (fault.kind) {
      case FaultKind::kMissingField:
        Remove(answer, fault.path ? tokens : DefaultTokens(generator.walker(), answer));
        break;
      case FaultKind::kWrongType:
        WrongType(fault.path ? tokens : DefaultTokens(generator.walker(), answer), answer, generator);
        break;
      case FaultKind::kOutOfRange:
        OutOfRange(fault, answer, generator);
        break;
      case FaultKind::kExtraField:
        ExtraField(fault, answer, generator);
        break;
      case FaultKind::kVerdict:
        Verdict(fault, answer);
        break;
      default:
        break;
    }
  }
}

void SummariseVerdict(json::value& answer) {
  json::array* results = JudgeResults(answer);
  if (results == nullptr || !answer.is_object()) return;
  json::array issues;
  json::array fixes;
  json::array undecided;
  for (const auto& item : *results) {
    if (!item.is_object()) continue;
    const json::value* id = item.get_object().if_contains("criterion_id");
    const json::value* verdict = item.get_object().if_contains("verdict");
    if (id == nullptr || !id->is_string() || verdict == nullptr || !verdict->is_string()) continue;
    std::string name(id->get_string());
    if (verdict->get_string() == "fail") {
      issues.emplace_back("The output does not satisfy \"" + name + "\".");
      fixes.emplace_back("Revise the output so that it satisfies \"" + name + "\".");
    } else if (verdict->get_string() == "indeterminate") {
      undecided.emplace_back(name);
    }
  }
  json::object& root = answer.get_object();
  if (root.contains("pass")) root["pass"] = issues.empty();
  if (root.contains("issues")) root["issues"] = std::move(issues);
  if (root.contains("suggested_fixes")) root["suggested_fixes"] = std::move(fixes);
  if (root.contains("indeterminate")) root["indeterminate"] = std::move(undecided);
}

void ApplyTextFaults(const std::vector<Fault>& faults, ShapedText& shaped) {
  auto any = [&](FaultKind kind) {
    return std::any_of(faults.begin(), faults.end(), [&](const Fault& f) { return Has(f, kind); });
  };
  if (any(FaultKind::kInvalidJson)) {
    std::string cut = CutInMiddle(shaped.text);
    boost::system::error_code ec;
    (void)json::parse(cut, ec);
    if (!ec) cut += ",";  // a scalar cut short may still parse
    shaped.text = std::move(cut);
  }
  if (any(FaultKind::kFence)) shaped.text = "```json\n" + shaped.text + "\n```";
  if (any(FaultKind::kProse)) {
    shaped.text = "Here is the JSON you asked for:\n" + shaped.text + "\nLet me know if you need anything else.";
  }
  if (any(FaultKind::kTruncate)) {
    shaped.text = CutInMiddle(shaped.text);
    shaped.finish_reason = FinishReason::kLength;
  }
  if (any(FaultKind::kRefusal)) {
    shaped.text.clear();
    shaped.refusal = std::string(kRefusal);
    shaped.finish_reason = FinishReason::kRefusal;
  }
  if (any(FaultKind::kContentFilter)) {
    shaped.text.clear();
    shaped.refusal.reset();
    shaped.finish_reason = FinishReason::kContentFilter;
  }
}

}  // namespace skillrunner::providers::simulation
