#include "runner/tree/descriptor_reader.h"

#include "services/common/json_text.h"

namespace skillrunner {
namespace json = boost::json;

std::string DescriptorReader::Str(std::string_view key) const {
  auto* v = root_.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t DescriptorReader::Int(std::string_view key, std::int64_t fallback) const {
  auto* v = root_.if_contains(key);
  return v ? IntOf(*v, fallback) : fallback;
}

std::int64_t DescriptorReader::IntOf(const json::value& v, std::int64_t fallback) {
  return JsonInteger(v).value_or(fallback);
}

double DescriptorReader::Num(std::string_view key, double fallback) const {
  auto* v = root_.if_contains(key);
  return v && v->is_number() ? v->to_number<double>() : fallback;
}

void DescriptorReader::Error(const std::string& pointer, const std::string& message, std::string code) {
  errors_.push_back({path_, doc_.positions.Find(pointer), (pointer.empty() ? std::string() : pointer + ": ") + message,
                     Diagnostic::Severity::kError, std::move(code)});
}

void DescriptorReader::Warn(const std::string& pointer, const std::string& message, std::string code) {
  warnings_.push_back({path_, doc_.positions.Find(pointer),
                       (pointer.empty() ? std::string() : pointer + ": ") + message, Diagnostic::Severity::kWarning,
                       std::move(code)});
}

void DescriptorReader::Add(Diagnostic diagnostic) {
  (diagnostic.severity == Diagnostic::Severity::kError ? errors_ : warnings_).push_back(std::move(diagnostic));
}

}  // namespace skillrunner
