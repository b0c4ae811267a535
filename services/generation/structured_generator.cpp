#include "services/generation/structured_generator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "runner/json_text.h"
#include "services/generation/json_extract.h"
#include "services/generation/prompt_builder.h"
#include "services/generation/strict_schema.h"

namespace skillrunner::generation {
namespace json = boost::json;
using providers::ChatRequest;
using providers::ChatResponse;
using providers::FinishReason;
using providers::ResponseFormat;

bool ModelDowngrades::IsDowngraded(const std::string& model) const {
  std::lock_guard lock(mutex_);
  return models_.contains(model);
}

bool ModelDowngrades::Downgrade(const std::string& model) {
  std::lock_guard lock(mutex_);
  return models_.insert(model).second;
}

std::string CapRaw(std::string_view text) {
  if (text.size() <= kMaxRawBytes) return std::string(text);
  std::size_t keep = kMaxRawBytes;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // UTF-8 boundary
  return std::string(text.substr(0, keep)) + "…[" + std::to_string(text.size() - keep) +
         " more bytes]";
}

std::string ResponseFormatName(std::string name) {
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (name.size() > 64) name.resize(64);
  return name;
}

std::string MetricsMode(const std::string& mode) {
  if (mode == "native") return "native_strict";
  if (mode == "json_object") return "json_object";
  return "validation_loop";
}

namespace {

// A 400 that names response_format: the model cannot take structured output.
bool IsUnsupportedResponseFormat(const Error& error) {
  auto* status = error.details.if_contains("http_status");
  if (!status || !status->is_int64() || status->as_int64() != 400) return false;
  if (auto* param = error.details.if_contains("provider_param");
      param && param->is_string() && param->as_string().starts_with("response_format")) {
    return true;
  }
  return error.message.find("response_format") != std::string::npos;
}

std::int64_t Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

Error Terminal(ErrorCode code, std::string message, std::vector<FieldError> errors = {}) {
  return Error{code, std::move(message), std::move(errors), {}};
}

std::string Count(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

StructuredGenerator::StructuredGenerator(providers::Provider& provider, providers::Sleeper& sleeper,
                                         ModelDowngrades& downgrades,
                                         providers::RetryingProviderOptions options)
    : provider_(provider), sleeper_(sleeper), downgrades_(downgrades), options_(std::move(options)) {}

boost::asio::awaitable<Result<json::value>> StructuredGenerator::Generate(const GenerationSpec& spec,
                                                                          InvocationContext& ctx) {
  providers::RetryingProvider retrying(provider_, sleeper_, options_);
  std::string mode = spec.mode;
  if (mode != "none" && downgrades_.IsDowngraded(spec.model)) mode = "none";

  // Callers pass the schema text made at load; serialise here only if not.
  std::string own_schema_text;
  const std::string* schema_text = spec.schema_text;
  if (schema_text == nullptr && spec.schema != nullptr) {
    own_schema_text = CompactJson(*spec.schema);
    schema_text = &own_schema_text;
  }

  ChatRequest request;
  request.model = spec.model;
  request.temperature = spec.temperature;
  request.max_output_tokens = spec.max_output_tokens;
  request.simulation = spec.simulation;
  auto configure = [&](const std::string& m) {
    ctx.metrics().mode = MetricsMode(m);
    request.messages = FirstMessages(spec.system, spec.user, m == "native" ? nullptr : schema_text,
                                     spec.avoid);
    request.response_format = ResponseFormat{};
    if (m == "json_object") request.response_format.kind = ResponseFormat::Kind::kJsonObject;
    if (m == "native") {
      request.response_format.kind = ResponseFormat::Kind::kJsonSchema;
      request.response_format.name = spec.schema_name;
      request.response_format.schema =
          spec.strict_wire_schema ? *spec.strict_wire_schema : *spec.schema;
      request.response_format.strict = true;
    }
  };
  configure(mode);

  int retries_left = spec.retry.validation_retries;
  bool truncation_retry_left = spec.retry_truncated;
  const double retry_temperature = std::min(spec.temperature, spec.retry.retry_temperature);
  for (;;) {
    request.simulation.attempt = static_cast<int>(ctx.attempts().size()) + 1;
    auto started = std::chrono::steady_clock::now();
    auto response = co_await retrying.Chat(request, spec.retry.transient, ctx);
    if (!response) {
      if (mode != "none" && IsUnsupportedResponseFormat(response.error())) {
        if (downgrades_.Downgrade(spec.model)) {
          spdlog::warn("model {} rejected response_format ({}); it uses the validation loop from now on",
                       spec.model, response.error().message);
        }
        if (Attempt* last = ctx.last_attempt()) {
          last->kind = "downgrade";
          last->errors = {{"", "the model does not support " + MetricsMode(mode) +
                                   " output; continuing with the validation loop: " +
                                   response.error().message}};
        }
        mode = "none";
        configure(mode);
        continue;
      }
      co_return std::unexpected(std::move(response.error()));
    }
    ChatResponse& answer = *response;
    Attempt attempt;
    attempt.temperature = request.temperature;
    attempt.raw = CapRaw(answer.text);
    attempt.http_status = answer.http_status;
    attempt.input_tokens = answer.usage.input_tokens;
    attempt.output_tokens = answer.usage.output_tokens;
    attempt.tokens_estimated = answer.usage.estimated;
    attempt.duration_ms = Ms(std::chrono::steady_clock::now() - started);
    if (request.max_output_tokens != spec.max_output_tokens) attempt.max_output_tokens = request.max_output_tokens;

    if (answer.finish_reason == FinishReason::kRefusal || answer.refusal) {
      attempt.kind = "refusal";
      attempt.errors = {{"", "the model refused: " + answer.refusal.value_or("")}};
      ctx.AddAttempt(std::move(attempt));
      co_return std::unexpected(Terminal(ErrorCode::kRefused, "the model refused to answer: " +
                                                                  answer.refusal.value_or("")));
    }
    if (answer.finish_reason == FinishReason::kContentFilter) {
      attempt.kind = "content_filter";
      attempt.errors = {{"", "the provider's content filter withheld the answer"}};
      ctx.AddAttempt(std::move(attempt));
      co_return std::unexpected(Terminal(ErrorCode::kContentFiltered,
                                         "the provider's content filter withheld the answer"));
    }
    if (answer.finish_reason == FinishReason::kLength) {
      attempt.kind = "truncated";
      attempt.errors = {{"", "the answer was cut off at max_output_tokens (" +
                                 std::to_string(request.max_output_tokens) + ")"}};
      ctx.AddAttempt(std::move(attempt));
      if (truncation_retry_left) {
        // Never re-ask with the cut text: the same request, with room to finish.
        truncation_retry_left = false;
        request.max_output_tokens *= 2;
        continue;
      }
      co_return std::unexpected(Terminal(
          ErrorCode::kTruncated, "the answer was cut off at max_output_tokens (" +
                                     std::to_string(request.max_output_tokens) + ")"));
    }

    auto extracted = ExtractJson(answer.text);
    bool parse_failure = !extracted;
    if (parse_failure) {
      attempt.kind = "parse";
      attempt.errors = {{"", "not JSON: " + extracted.error().message}};
    } else {
      attempt.repair = extracted->repair;
      json::value value = std::move(extracted->value);
      if (mode == "native" && spec.strict_wire_schema != nullptr) {
        value = MapBackStrictAnswer(value, *spec.schema);
      }
      attempt.errors = spec.compiled_schema->Validate(value);
      if (spec.extra_validator) {
        auto more = spec.extra_validator(value);
        attempt.errors.insert(attempt.errors.end(), more.begin(), more.end());
      }
      if (attempt.errors.empty()) {
        attempt.kind = "ok";
        ctx.AddAttempt(std::move(attempt));
        co_return value;
      }
      attempt.kind = "validation";
    }
    std::vector<FieldError> errors = attempt.errors;
    ctx.AddAttempt(std::move(attempt));
    if (retries_left <= 0) {
      int retries = spec.retry.validation_retries;
      std::string after = " after " + Count(static_cast<std::size_t>(retries), "retry", "retries");
      co_return std::unexpected(Terminal(
          ErrorCode::kMaxRetriesExceeded,
          parse_failure ? "the answer is still not JSON" + after
                        : "the answer still does not match the output schema" + after + " (" +
                              Count(errors.size(), "error", "errors") + ")",
          std::move(errors)));
    }
    --retries_left;
    ++ctx.metrics().validation_retries;
    // Continue the conversation: the invalid answer verbatim, then every error.
    request.messages.push_back({"assistant", answer.text});
    request.messages.push_back({"user", RetryTurn(errors, parse_failure)});
    request.temperature = retry_temperature;
  }
}

}  // namespace skillrunner::generation
