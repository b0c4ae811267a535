#include "services/common/stream_events.h"

#include <boost/json/array.hpp>

namespace skillrunner {
namespace json = boost::json;

void StreamEvents::Partial(int attempt, const json::value& value, const std::vector<std::string>& complete) {
  shown_attempt_ = attempt;
  json::array pointers;
  pointers.reserve(complete.size());
  for (const std::string& pointer : complete) pointers.emplace_back(pointer);
  emit_("skills.partial", json::object{{"attempt", attempt}, {"value", value}, {"complete", std::move(pointers)}});
}

void StreamEvents::Reset(int attempt, std::string_view reason, const std::vector<FieldError>& errors) {
  shown_attempt_ = 0;
  json::array list;
  for (const FieldError& error : errors) list.push_back(json::object{{"path", error.path}, {"message", error.message}});
  emit_("skills.reset", json::object{{"attempt", attempt}, {"reason", reason}, {"errors", std::move(list)}});
}

}  // namespace skillrunner
