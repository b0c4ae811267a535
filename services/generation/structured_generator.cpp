#include "services/generation/structured_generator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "services/generation/answer_check.h"
#include "services/generation/answer_stream.h"
#include "services/generation/json_extract.h"
#include "services/generation/prompt_builder.h"
#include "services/validation/compiled_schema.h"

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

bool ModelDowngrades::NoteViolation(const std::string& model, Clock::TimePoint now) {
  std::lock_guard lock(mutex_);
  if (models_.contains(model)) return false;
  std::deque<Clock::TimePoint>& times = violations_[model];
  times.push_back(now);
  while (!times.empty() && now - times.front() > kViolationWindow) times.pop_front();
  if (static_cast<int>(times.size()) < kViolationsToDowngrade) return false;
  violations_.erase(model);
  return models_.insert(model).second;
}

std::string CapRaw(std::string_view text) {
  if (text.size() <= kMaxRawBytes) return std::string(text);
  std::size_t keep = kMaxRawBytes;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // UTF-8 boundary
  return std::string(text.substr(0, keep)) + "…[" + std::to_string(text.size() - keep) + " more bytes]";
}

void ShareWire(AnswerSchema& schema) {
  schema.wire =
      std::make_shared<const json::value>(schema.strict_wire.is_null() ? schema.original : schema.strict_wire);
}

std::string ResponseFormatName(std::string name) {
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (name.size() > 64) name.resize(64);
  return name;
}

namespace {

Error Terminal(ErrorCode code, std::string message, std::vector<FieldError> errors = {}) {
  return Error{code, std::move(message), std::move(errors), {}};
}

std::string Count(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The state of one generation's conversation with the model.
struct Conversation {
  const GenerationSpec& spec;
  const Prompt& prompt;
  // Where it runs now: the spec's model, a fallback or the escalation.
  std::string_view provider;
  const AnswerSchema* schema;
  OutputMode mode;
  ChatRequest request;
  std::size_t first_messages = 0;  // how many of request.messages a fresh retry starts from
  int retries_left;
  bool truncation_retry_left;
};

// Native and tool mode send the skill's schema as the provider's strict copy.
bool UsesStrictWire(OutputMode mode) { return mode == OutputMode::kNative || mode == OutputMode::kTool; }

// The first request for `mode`: messages (the schema in the prompt unless
// native), the response format, and the request metadata.
void Configure(Conversation& c, OutputMode mode, InvocationContext& ctx) {
  const AnswerSchema& schema = *c.schema;
  c.mode = mode;
  ctx.metrics().mode = RunModeFor(mode);
  c.request.messages =
      FirstMessages(c.prompt.system, c.prompt.user, UsesStrictWire(mode) ? nullptr : &schema.text, c.prompt.avoid);
  if (!c.prompt.rejected_answer.empty()) {
    // A regeneration after a failed review: a fresh validation retry keeps it.
    c.request.messages.push_back({"assistant", c.prompt.rejected_answer, 0});
    c.request.messages.push_back({"user", c.prompt.critique, 0});
  }
  c.first_messages = c.request.messages.size();
  c.request.response_format = ResponseFormat{};
  if (mode == OutputMode::kJsonObject) c.request.response_format.kind = ResponseFormat::Kind::kJsonObject;
  if (UsesStrictWire(mode)) {
    c.request.response_format.kind =
        mode == OutputMode::kTool ? ResponseFormat::Kind::kTool : ResponseFormat::Kind::kJsonSchema;
    c.request.response_format.name = c.spec.schema_name;
    c.request.response_format.schema =
        schema.wire
            ? schema.wire
            : std::make_shared<const json::value>(schema.strict_wire.is_null() ? schema.original : schema.strict_wire);
    c.request.response_format.strict = true;
  }
}

Conversation Begin(const GenerationSpec& spec, const Prompt& prompt, int sample, const ModelDowngrades& downgrades,
                   InvocationContext& ctx) {
  Conversation c{spec,
                 prompt,
                 spec.provider,
                 spec.schema.get(),
                 spec.mode,
                 {},
                 0,
                 spec.retry.validation_retries,
                 spec.retry_truncated};
  c.request.model = spec.model;
  c.request.temperature = spec.temperature;
  c.request.max_output_tokens = spec.max_output_tokens;
  c.request.metadata.invocation_id = ctx.invocation_id();
  c.request.metadata.provider = spec.provider;
  c.request.metadata.role = spec.role;
  c.request.metadata.skill_id = ctx.skill_id();
  c.request.metadata.skill_version = spec.skill_version;
  c.request.metadata.task_id = spec.task_id;
  c.request.metadata.sample = sample;
  c.request.metadata.seed = ctx.options().seed;
  c.request.metadata.eval = ctx.options().eval;
  c.request.metadata.answer_schema = &spec.schema->original;
  c.request.metadata.price = spec.price;
  OutputMode mode = spec.mode;
  if (mode != OutputMode::kNone && downgrades.IsDowngraded(spec.model)) mode = OutputMode::kNone;
  Configure(c, mode, ctx);
  return c;
}

Attempt AnsweredAttempt(const Conversation& c, const ChatResponse& answer) {
  Attempt attempt;
  attempt.role = c.spec.role;
  attempt.model = c.request.model;
  attempt.provider = std::string(c.provider);
  attempt.temperature = c.request.temperature;
  attempt.raw = CapRaw(answer.text);
  attempt.http_status = answer.http_status;
  attempt.input_tokens = answer.usage.input_tokens;
  attempt.cached_input_tokens = answer.usage.cached_input_tokens;
  if (const auto& price = c.request.metadata.price) {
    attempt.cost_usd = CostUsd(*price, answer.usage.input_tokens, answer.usage.cached_input_tokens,
                               answer.usage.cache_write_tokens, answer.usage.output_tokens);
  }
  if (!answer.batch_id.empty()) {  // design.md §10.6: the batch price, and the online price it replaced
    attempt.batch_id = answer.batch_id;
    if (const auto& price = c.request.metadata.price) {
      attempt.online_cost_usd = attempt.cost_usd;
      attempt.cost_usd = CostUsd(BatchPrice(*price), answer.usage.input_tokens, answer.usage.cached_input_tokens,
                                 answer.usage.cache_write_tokens, answer.usage.output_tokens);
    }
  }
  attempt.output_tokens = answer.usage.output_tokens;
  attempt.tokens_estimated = answer.usage.estimated;
  attempt.waited_ms = answer.timing.waited_ms;
  attempt.duration_ms = answer.timing.duration_ms;
  attempt.span = answer.span;
  if (answer.from_cache) {
    attempt.from_cache = true;
    if (attempt.cost_usd) attempt.cost_usd = 0.0;  // nobody was billed for it
  }
  if (answer.queued_ms > 0) attempt.queued_ms = answer.queued_ms;
  if (c.request.max_output_tokens != c.spec.max_output_tokens) attempt.max_output_tokens = c.request.max_output_tokens;
  return attempt;
}

// What a `length` finish means, stated from what the provider reported
// (design.md §9.3): the output tokens against the budget; fewer than the budget
// means something else ended it, most likely the model's context window.
std::string TruncationMessage(const providers::Usage& usage, int max_output_tokens) {
  const std::string budget = "max_output_tokens " + std::to_string(max_output_tokens);
  if (usage.estimated || usage.output_tokens <= 0) return "the answer was cut off (" + budget + ")";
  std::string message = "the answer was cut off after " +
                        Count(static_cast<std::size_t>(usage.output_tokens), "output token", "output tokens") + " (" +
                        budget + ")";
  if (usage.output_tokens < max_output_tokens) {
    message += "; the prompt and answer may have filled the model's context window";
  }
  return message;
}

// Refusal, content filter and truncation end the generation (or, for a
// truncation with its retry left, ask the same again with room to finish).
// nullopt when the answer is to be checked.
std::optional<std::optional<Error>> Stopped(Conversation& c, const ChatResponse& answer, Attempt& attempt,
                                            InvocationContext& ctx) {
  auto end = [&](AttemptKind kind, std::string why, Error error) -> std::optional<std::optional<Error>> {
    attempt.kind = kind;
    attempt.errors = {{"", std::move(why)}};
    ctx.AddAttempt(std::move(attempt));
    return std::optional<Error>(std::move(error));
  };
  if (answer.finish_reason == FinishReason::kRefusal || answer.refusal) {
    std::string refusal = answer.refusal.value_or("");
    return end(AttemptKind::kRefusal, "the model refused: " + refusal,
               Terminal(ErrorCode::kRefused, "the model refused to answer: " + refusal));
  }
  if (answer.finish_reason == FinishReason::kContentFilter) {
    const std::string why = "the provider's content filter withheld the answer";
    return end(AttemptKind::kContentFilter, why, Terminal(ErrorCode::kContentFiltered, why));
  }
  if (answer.finish_reason != FinishReason::kLength) return std::nullopt;
  const std::string why = TruncationMessage(answer.usage, c.request.max_output_tokens);
  if (!c.truncation_retry_left) return end(AttemptKind::kTruncated, why, Terminal(ErrorCode::kTruncated, why));
  attempt.kind = AttemptKind::kTruncated;
  attempt.errors = {{"", why}};
  ctx.AddAttempt(std::move(attempt));
  // Never re-ask with the cut text: the same request, with room to finish.
  c.truncation_retry_left = false;
  c.request.max_output_tokens *= 2;
  return std::optional<Error>();
}

// Parses and validates the answer (answer_check.h); in the mode this
// conversation is in now.
std::optional<json::value> Check(const Conversation& c, const ChatResponse& answer, Attempt& attempt) {
  return CheckAnswer(c.spec, *c.schema, c.mode, answer, attempt);
}

// The rules' verdict on a schema-valid answer, into `attempt` (kind rule when
// one rejects it); false when the answer stands.
bool Rejected(std::vector<FieldError> broken, Attempt& attempt) {
  if (broken.empty()) return false;
  attempt.kind = AttemptKind::kRule;
  attempt.errors = std::move(broken);
  return true;
}

// The errors by pointer into what the model wrote: under /value when the
// wire schema wrapped the root.
std::vector<FieldError> AsTheModelAnswered(const Conversation& c, const std::vector<FieldError>& errors) {
  const AnswerSchema& schema = *c.schema;
  if (!UsesStrictWire(c.mode) || !schema.wrapped || schema.strict_wire.is_null()) return errors;
  std::vector<FieldError> shown = errors;
  for (FieldError& error : shown) error.path = "/value" + error.path;
  return shown;
}

// After a failed check: the error when the retry is spent, else the next
// request, colder: the invalid answer verbatim, then every error
// (continuation); or the original messages, then every error (fresh).
std::optional<Error> Retry(Conversation& c, const std::string& answer_text, const Attempt& failed,
                           InvocationContext& ctx) {
  if (c.retries_left <= 0) {
    std::string after =
        " after " + Count(static_cast<std::size_t>(c.spec.retry.validation_retries), "retry", "retries");
    std::string message = "the answer is still not JSON" + after;
    if (failed.kind != AttemptKind::kParse) {
      message = (failed.kind == AttemptKind::kRule ? "the answer still breaks the skill's validators"
                                                   : "the answer still does not match the output schema") +
                after + " (" + Count(failed.errors.size(), "error", "errors") + ")";
    }
    return Terminal(ErrorCode::kMaxRetriesExceeded, std::move(message), failed.errors);
  }
  --c.retries_left;
  ++ctx.metrics().validation_retries;
  // A stream stopped early was cut: it is never shown back (design.md §10.7).
  const bool fresh = c.spec.retry.strategy == RetryStrategy::kFresh || failed.aborted_early;
  std::string turn = RetryTurn(AsTheModelAnswered(c, failed.errors), failed.kind, fresh,
                               c.mode == OutputMode::kTool ? std::string_view(c.spec.schema_name) : "");
  if (fresh) {
    c.request.messages.resize(c.first_messages);
  } else {
    c.request.messages.push_back({"assistant", answer_text, 0});
  }
  c.request.messages.push_back({"user", std::move(turn), 0});
  c.request.temperature = std::min(c.spec.temperature, c.spec.retry.retry_temperature);
  c.request.metadata.validation_retry = true;
  return std::nullopt;
}

// Moves the conversation to `route` (design.md §9.3): its model, provider,
// schema and mode (the validation loop for a model that was downgraded).
void SwitchTo(Conversation& c, const ModelRoute& route, const ModelDowngrades& downgrades, InvocationContext& ctx) {
  c.request.model = route.model;
  c.request.metadata.provider = route.provider;
  c.request.metadata.price = route.price;
  c.provider = route.provider;
  c.schema = route.schema.get();
  OutputMode mode = route.mode;
  if (mode != OutputMode::kNone && downgrades.IsDowngraded(route.model)) mode = OutputMode::kNone;
  Configure(c, mode, ctx);
}

// After the retries are spent: one generation on the stronger model, asked
// as a fresh retry is (its own first messages plus one user turn with every
// error of the last answer), at the retry temperature, with no retry after it.
void Escalate(Conversation& c, const ModelRoute& route, const Attempt& failed, const ModelDowngrades& downgrades,
              InvocationContext& ctx) {
  SwitchTo(c, route, downgrades, ctx);
  const std::string_view tool = c.mode == OutputMode::kTool ? std::string_view(c.spec.schema_name) : "";
  c.request.messages.push_back({"user", RetryTurn(AsTheModelAnswered(c, failed.errors), failed.kind, true, tool), 0});
  c.request.temperature = std::min(c.spec.temperature, c.spec.retry.retry_temperature);
  c.request.metadata.validation_retry = true;
  c.retries_left = 0;
}

// The model's transient budget is spent: on to `fallback`, with a fresh one.
void FallBack(Conversation& c, const ModelRoute& fallback, const Error& why, const ModelDowngrades& downgrades,
              InvocationContext& ctx) {
  spdlog::warn("skill {}: model {} gave up ({}); falling back to {}", ctx.skill_id(), c.request.model, why.message,
               fallback.model);
  ++ctx.metrics().fallbacks;
  SwitchTo(c, fallback, downgrades, ctx);
}

// design.md §11.5: the model refused (or its provider's filter withheld the answer): the same
// request to the next model of its on_refusal list, which is not followed in turn.
bool TurnOnRefusal(Conversation& c, const Error& why, std::size_t& next, const ModelDowngrades& downgrades,
                   InvocationContext& ctx) {
  if (why.code != ErrorCode::kRefused && why.code != ErrorCode::kContentFiltered) return false;
  if (next >= c.spec.on_refusal.size()) return false;
  const ModelRoute& route = c.spec.on_refusal[next++];
  spdlog::info("skill {}: model {} ended the call {}; trying {} (on_refusal)", ctx.skill_id(), c.request.model,
               ErrorCodeName(why.code), route.model);
  ++ctx.metrics().fallbacks;
  SwitchTo(c, route, downgrades, ctx);  // with the validation budget that is left, as a fallback
  return true;
}

// The model cannot take the response format: the validation loop, for the
// rest of the process.
void Downgrade(Conversation& c, const Error& why, ModelDowngrades& downgrades, InvocationContext& ctx) {
  if (downgrades.Downgrade(c.request.model)) {
    spdlog::warn("model {} rejected response_format ({}); it uses the validation loop from now on", c.request.model,
                 why.message);
  }
  Configure(c, OutputMode::kNone, ctx);
}

// Whether a failed call may move to the next fallback: the model's transient
// budget is spent, or its rate limit left no slot before the deadline.
bool FallsBack(const Error& error) {
  return error.code == ErrorCode::kProviderUnavailable || error.code == ErrorCode::kOverloaded;
}

// One answer on its way through the checks: on the heap while it is
// checked, so that the generation's coroutine frame, held while each request
// is in flight, keeps none of it.
struct Reply {
  Attempt attempt;
  std::optional<json::value> value;  // the answer when it passed the checks so far
  std::optional<Error> stop;         // set when the generation ends with this error
};

// Whether an answer that failed the skill's schema also breaks the one the provider was sent and
// claims to hold its answers to: it did not parse, or it fails that schema (only checked now, after
// the skill's failed; a keyword the strict mode leaves to skillrunner is no violation).
bool BreaksTheWire(const Conversation& c, const ChatResponse& answer, const Attempt& attempt) {
  if (attempt.kind == AttemptKind::kParse) return true;
  if (attempt.kind != AttemptKind::kValidation) return false;
  auto extracted = ExtractJson(answer.text);
  if (!extracted) return true;
  auto wire = validation::CompiledSchema::Compile(c.request.response_format.Schema());
  return wire && !(*wire)->Validate(extracted->value).empty();
}

// design.md §11.5: in native and tool mode, an answer outside the wire schema is the provider's
// strict mode failing (native_violation); the third within ten minutes sends the model to the
// validation loop for the life of the process (logged once; native_downgrade marks the attempt).
void NoteViolation(const Conversation& c, const ChatResponse& answer, Attempt& attempt, ModelDowngrades& downgrades,
                   InvocationContext& ctx) {
  if (!UsesStrictWire(c.mode) || !c.request.response_format.strict || !BreaksTheWire(c, answer, attempt)) return;
  attempt.native_violation = true;
  if (!downgrades.NoteViolation(c.request.model, ctx.clock().Now())) return;
  attempt.native_downgrade = true;
  ctx.metrics().native_downgraded = c.request.model;
  spdlog::warn(
      "model {} answered outside the schema its {} mode was sent {} times within {} minutes; it uses the "
      "validation loop from now on",
      c.request.model, c.mode == OutputMode::kTool ? "tool" : "native", ModelDowngrades::kViolationsToDowngrade,
      ModelDowngrades::kViolationWindow.count());
}

enum class Verdict { kAskAgain, kStop, kChecked };

// Records what the model answered and checks it: refusal, content filter and
// truncation (kAskAgain: the same request with room to finish; kStop), then
// parsing, the schema and the rules that need no process (kChecked, with
// reply.value when the answer passed).
Verdict Examine(Conversation& c, const ChatResponse& answer, Reply& reply, ModelDowngrades& downgrades,
                InvocationContext& ctx) {
  reply.attempt = AnsweredAttempt(c, answer);
  if (ctx.options().show_request) reply.attempt.request = providers::RequestForDisplay(c.request);
  if (auto stopped = Stopped(c, answer, reply.attempt, ctx)) {
    if (!*stopped) return Verdict::kAskAgain;
    reply.stop = std::move(**stopped);
    return Verdict::kStop;
  }
  reply.value = Check(c, answer, reply.attempt);
  if (!reply.value) NoteViolation(c, answer, reply.attempt, downgrades, ctx);
  if (reply.value && !c.spec.rules.empty() && !HasExecRules(c.spec.rules)) {
    if (Rejected(CheckNonEmpty(c.spec.rules, *reply.value), reply.attempt)) reply.value.reset();
  }
  return Verdict::kChecked;
}

// After a rejected answer: the next request (a retry, or the escalation
// once the retries are spent), with the rejected attempt recorded; false,
// with reply.stop, when nothing is left to try.
bool AskAgain(Conversation& c, const std::string& answer_text, Reply& reply, bool& escalated,
              const ModelDowngrades& downgrades, InvocationContext& ctx) {
  std::optional<Error> spent = Retry(c, answer_text, reply.attempt, ctx);
  if (spent && c.spec.escalation && !escalated) {
    escalated = true;
    ctx.metrics().escalated = true;
    spdlog::info("skill {}: model {} spent its retries; escalating to {}", ctx.skill_id(), c.request.model,
                 c.spec.escalation->model);
    Escalate(c, *c.spec.escalation, reply.attempt, downgrades, ctx);
    spent.reset();
  }
  ctx.AddAttempt(std::move(reply.attempt));
  if (!spent) return true;
  reply.stop = std::move(*spent);
  return false;
}

// After a failed request: on to the next fallback, or to the validation
// loop for a model that cannot take the response format; false when the
// error ends the generation.
bool Recover(Conversation& c, const Error& error, std::size_t& next_fallback, ModelDowngrades& downgrades,
             InvocationContext& ctx) {
  if (FallsBack(error) && next_fallback < c.spec.fallbacks.size()) {
    FallBack(c, c.spec.fallbacks[next_fallback++], error, downgrades, ctx);
    return true;
  }
  if (c.mode == OutputMode::kNone || !providers::IsUnsupportedResponseFormat(error)) return false;
  Downgrade(c, error, downgrades, ctx);
  return true;
}

// Streams the next request's answer (design.md §10.7): complete members are
// checked against the skill's schema as the model writes it, except where the
// wire schema wraps the root (strict providers hold their answers to it).
void ArmStream(AnswerStream& stream, Conversation& c) {
  const AnswerSchema& schema = *c.schema;
  const bool strict = UsesStrictWire(c.mode) && !schema.strict_wire.is_null();
  const bool wrapped = strict && schema.wrapped;
  stream.Arm(c.request, wrapped ? nullptr : &schema.original, strict, wrapped);
}

// A stream stopped because a complete member broke the schema: a validation
// failure of a cut answer, with the tokens that arrived.
void AbortedAttempt(const Conversation& c, const ChatResponse& answer, const AnswerStream& stream, Reply& reply) {
  reply.attempt = AnsweredAttempt(c, answer);
  reply.attempt.kind = AttemptKind::kValidation;
  reply.attempt.errors = stream.abort_errors();
  reply.attempt.aborted_early = true;
}

Error Unconfigured(const Conversation& c) {
  return Terminal(ErrorCode::kConfigInvalid, "model \"" + c.request.model + "\" runs on provider \"" +
                                                 std::string(c.provider) + "\", which this process has not configured");
}

}  // namespace

StructuredGenerator::StructuredGenerator(ProviderLookup providers, ModelDowngrades& downgrades,
                                         providers::RetryingProviderOptions options, RuleRunner* rules)
    : providers_(std::move(providers)), downgrades_(downgrades), options_(std::move(options)), rules_(rules) {}

// The coroutine keeps what crosses a request (its frame is part of every
// invocation in flight); each answer is dealt with in plain functions.
boost::asio::awaitable<Result<Produced>> StructuredGenerator::Generate(const GenerationSpec& spec, Prompt prompt,
                                                                       InvocationContext& ctx, int sample) const {
  Conversation c = Begin(spec, prompt, sample, downgrades_, ctx);
  std::unique_ptr<AnswerStream> stream;  // on the heap: the frame stays small without one
  if (ctx.options().stream != nullptr && spec.role == AttemptRole::kGeneration) {
    stream = std::make_unique<AnswerStream>(*ctx.options().stream, ctx);
  }
  std::size_t next_fallback = 0;
  std::size_t next_on_refusal = 0;
  bool escalated = false;
  for (;;) {
    providers::Provider* provider = providers_(c.provider);
    if (provider == nullptr) co_return std::unexpected(Unconfigured(c));
    providers::RetryingProvider retrying(*provider, options_);
    if (stream) ArmStream(*stream, c);
    auto response = co_await retrying.Chat(c.request, spec.retry.transient, ctx);
    if (!response) {
      if (stream && FallsBack(response.error()) && next_fallback < spec.fallbacks.size()) {
        stream->OverrideReason("fallback");
      }
      if (Recover(c, response.error(), next_fallback, downgrades_, ctx)) continue;
      co_return std::unexpected(std::move(response.error()));
    }
    auto reply = std::make_unique<Reply>();
    if (stream) stream->Answered(*response);
    const bool aborted = stream && response->stopped_early;
    if (aborted) AbortedAttempt(c, *response, *stream, *reply);
    const Verdict verdict = aborted ? Verdict::kChecked : Examine(c, *response, *reply, downgrades_, ctx);
    if (verdict == Verdict::kAskAgain) continue;
    if (verdict == Verdict::kStop && TurnOnRefusal(c, *reply->stop, next_on_refusal, downgrades_, ctx)) continue;
    if (verdict == Verdict::kStop) co_return std::unexpected(std::move(*reply->stop));
    if (reply->value && HasExecRules(spec.rules)) {
      Result<std::vector<FieldError>> broken = co_await CheckRules(spec.rules, *reply->value, rules_, ctx);
      if (!broken) {
        // A validator that fails is never a pass: the answer it was given stays on record.
        reply->attempt.kind = AttemptKind::kHandler;
        reply->attempt.errors = {{"", broken.error().message}};
        ctx.AddAttempt(std::move(reply->attempt));
        co_return std::unexpected(std::move(broken.error()));
      }
      if (Rejected(std::move(*broken), reply->attempt)) reply->value.reset();
    }
    if (reply->value) {
      co_return Produced{std::move(*reply->value), std::make_unique<Attempt>(std::move(reply->attempt))};
    }
    if (!AskAgain(c, response->text, *reply, escalated, downgrades_, ctx)) {
      co_return std::unexpected(std::move(*reply->stop));
    }
  }
}

}  // namespace skillrunner::generation
