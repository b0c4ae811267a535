#include "runner/server/params.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "runner/server/json_rpc.h"
#include "services/common/stream_events.h"
#include "services/common/trace_context.h"

namespace skillrunner::server {
namespace json = boost::json;

const json::value* ParamMember(const json::value& params, std::string_view name) {
  if (!params.is_object()) return nullptr;
  return params.as_object().if_contains(name);
}

std::string ParamString(const json::value& params, std::string_view name) {
  const json::value* member = ParamMember(params, name);
  return member && member->is_string() ? std::string(member->as_string()) : std::string();
}

namespace {

// A day: longer asks are mistakes, and far longer ones overflow clock arithmetic.
constexpr std::int64_t kMaxTimeoutMs = 24LL * 3600 * 1000;
constexpr std::size_t kMaxRoutingKey = 1024;

// stream and partial_interval_ms: whether partials are sent, and how often.
void ReadStreamOption(std::string_view key, const json::value& value, const std::string& path, InvokeParams& params,
                      std::vector<FieldError>& errors) {
  if (key == "stream") {
    if (value.is_bool()) {
      params.stream = value.as_bool();
    } else {
      errors.push_back({path, "expected true or false"});
    }
    return;
  }
  if (value.is_int64() && value.as_int64() >= 0 && value.as_int64() <= kMaxPartialInterval.count()) {
    params.partial_interval = std::chrono::milliseconds(value.as_int64());
  } else {
    errors.push_back({path, "expected an integer from 0 to " + std::to_string(kMaxPartialInterval.count()) +
                                " (milliseconds between partials; 0: every one)"});
  }
}

// `routing_key` and `version` (design.md §11.2): which version of a skill answers.
void ReadRoutingOption(std::string_view key, const json::value& value, const std::string& path,
                       InvocationOptions& options, std::vector<FieldError>& errors) {
  if (key == "routing_key") {
    if (value.is_string() && !value.as_string().empty() && value.as_string().size() <= kMaxRoutingKey) {
      options.routing_key = std::string(value.as_string());
    } else {
      errors.push_back({path, "expected a string of 1 to " + std::to_string(kMaxRoutingKey) + " characters"});
    }
  } else if (value.is_int64() && value.as_int64() >= 1 && value.as_int64() <= std::numeric_limits<int>::max()) {
    options.version = static_cast<int>(value.as_int64());
  } else {
    errors.push_back({path, "expected a version number (an integer from 1)"});
  }
}

// One member of `options`, into `options`; a bad one is an error at `path`.
void ReadOption(std::string_view key, const json::value& value, const std::string& path, InvokeParams& params,
                std::vector<FieldError>& errors) {
  InvocationOptions& options = params.options;
  if (key == "stream" || key == "partial_interval_ms") {
    ReadStreamOption(key, value, path, params, errors);
  } else if (key == "routing_key" || key == "version") {
    ReadRoutingOption(key, value, path, options, errors);
  } else if (key == "timeout_ms") {
    if (value.is_int64() && value.as_int64() > 0 && value.as_int64() <= kMaxTimeoutMs) {
      options.timeout = std::chrono::milliseconds(value.as_int64());
    } else {
      errors.push_back({path, "expected an integer from 1 to " + std::to_string(kMaxTimeoutMs)});
    }
  } else if (key == "seed") {
    if (value.is_uint64()) {
      options.seed = value.as_uint64();
    } else if (value.is_int64() && value.as_int64() >= 0) {
      options.seed = static_cast<std::uint64_t>(value.as_int64());
    } else {
      errors.push_back({path, "expected a non-negative integer"});
    }
  } else if (key == "session") {
    if (value.is_string() && !value.as_string().empty()) {
      options.session = std::string(value.as_string());
    } else {
      errors.push_back({path, "expected a non-empty string"});
    }
  } else if (key == "show_request") {
    if (value.is_bool()) {
      options.show_request = value.as_bool();
    } else {
      errors.push_back({path, "expected true or false"});
    }
  } else if (key == "max_cost_usd") {
    if (value.is_number() && value.to_number<double>() > 0) {
      options.max_cost_usd = value.to_number<double>();
    } else {
      errors.push_back({path, "expected a number of USD above 0"});
    }
  } else if (key == "traceparent") {
    std::string why = "expected a string";
    if (value.is_string()) options.traceparent = ParseTraceparent(value.as_string(), &why);
    if (!options.traceparent) errors.push_back({path, "not a W3C traceparent: " + why});
  } else {
    errors.push_back(
        {path,
         "unknown option (expected timeout_ms, seed, session, show_request, max_cost_usd, traceparent, stream, "
         "partial_interval_ms, routing_key, version)"});
  }
}

}  // namespace

std::expected<InvokeParams, std::vector<FieldError>> ReadInvokeParams(json::value& params) {
  std::vector<FieldError> errors;
  if (!params.is_object()) {
    return std::unexpected(std::vector<FieldError>{{"", "expected an object {skill, input, options?}"}});
  }
  InvokeParams out;
  for (const auto& [key, value] : params.as_object()) {
    if (key != "skill" && key != "input" && key != "options") {
      errors.push_back({"/" + std::string(key), "unknown member (expected skill, input, options)"});
    }
  }
  const json::value* skill = ParamMember(params, "skill");
  if (!skill) {
    errors.push_back({"/skill", "missing: the id of the skill to invoke"});
  } else if (!skill->is_string() || skill->as_string().empty()) {
    errors.push_back({"/skill", "expected a non-empty string"});
  } else {
    out.skill = std::string(skill->as_string());
  }
  json::value* input = params.as_object().if_contains("input");
  if (!input) {
    errors.push_back({"/input", "missing: the skill's input (any JSON value its input_schema accepts)"});
  } else {
    out.input = std::move(*input);  // the request owns it; inputs may be large
  }
  if (const json::value* options = ParamMember(params, "options"); options && !options->is_null()) {
    if (!options->is_object()) {
      errors.push_back(
          {"/options",
           "expected an object {timeout_ms?, seed?, session?, show_request?, max_cost_usd?, traceparent?, stream?, "
           "partial_interval_ms?, routing_key?, version?}"});
    } else {
      for (const auto& [key, value] : options->as_object()) {
        ReadOption(key, value, "/options/" + std::string(key), out, errors);
      }
    }
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));
  return out;
}

json::object InvalidParamsAnswer(const json::value& id, const std::vector<FieldError>& errors) {
  json::array items;
  for (const auto& e : errors) items.push_back(json::object{{"path", e.path}, {"message", e.message}});
  std::string message = "Invalid params";
  if (!errors.empty()) {
    message += ": " + (errors.front().path.empty() ? std::string("params") : errors.front().path) + ": " +
               errors.front().message;
  }
  return ErrorAnswer(id, kInvalidParams, message, json::object{{"errors", std::move(items)}});
}

}  // namespace skillrunner::server
