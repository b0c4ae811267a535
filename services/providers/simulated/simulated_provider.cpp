#include "services/providers/simulated/simulated_provider.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <span>
#include <stdexcept>

#include "services/providers/simulated/fault_apply.h"
#include "services/providers/simulated/feedback_repair.h"
#include "services/providers/simulated/instance_edit.h"
#include "services/providers/simulated/schema_instance.h"
#include "services/providers/simulated/sim_random.h"

namespace skillrunner::providers {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using simulation::InstanceGenerator;
using simulation::Rng;

std::string Hex16(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

const json::value& SchemaOf(const ChatRequest& request) {
  if (request.metadata.answer_schema != nullptr) return *request.metadata.answer_schema;
  return request.response_format.Schema();
}

ProviderError Cancelled() {
  ProviderError error;
  error.kind = ProviderError::Kind::kCancelled;
  error.message = "the request was cancelled";
  return error;
}

std::expected<std::uint64_t, std::string> NonNegative(const json::value& value, std::string_view name) {
  if (value.is_int64() && value.get_int64() >= 0) return static_cast<std::uint64_t>(value.get_int64());
  if (value.is_uint64()) return value.get_uint64();
  return std::unexpected(std::string(name) + ": expected a non-negative integer, found " + json::serialize(value));
}

}  // namespace

std::uint64_t SimulationSeed(const ChatRequest& request, std::uint64_t request_seed, std::uint64_t provider_seed,
                             std::size_t messages) {
  simulation::Fnv1a hash;
  hash.Add(request.metadata.task_id);
  hash.Add(std::string_view("\0", 1));
  for (const auto& message : std::span(request.messages).first(std::min(messages, request.messages.size()))) {
    hash.Add(message.role);
    hash.Add(std::string_view("\0", 1));
    hash.Add(message.content);
    hash.Add(std::string_view("\0", 1));
  }
  hash.Add(request_seed);
  hash.Add(provider_seed);
  return hash.value();
}

SimulatedProvider::SimulatedProvider(SimulatedProviderOptions options) : options_(std::move(options)) {
  auto faults = ParseFaultScript(options_.faults, FaultScriptScope::kConfig);
  if (!faults) throw std::invalid_argument("simulated provider faults: " + faults.error().message);
  config_faults_ = std::move(*faults);
}

asio::awaitable<ChatResult> SimulatedProvider::Chat(const ChatRequest& request) {
  if (options_.latency.count() > 0) {
    asio::steady_timer timer(co_await asio::this_coro::executor, options_.latency);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return std::unexpected(Cancelled());
  }
  co_return Answer(request);
}

void SimulatedProvider::SetSkillSimulations(std::map<std::string, SkillSimulation, std::less<>> skills) {
  skills_ = std::move(skills);
}

const SkillSimulation* SimulatedProvider::SimulationFor(std::string_view skill_id, int skill_version) const {
  if (skill_version > 0) {
    auto versioned = skills_.find(std::string(skill_id) + "@" + std::to_string(skill_version));
    if (versioned != skills_.end()) return &versioned->second;
  }
  auto it = skills_.find(skill_id);
  return it == skills_.end() ? nullptr : &it->second;
}

std::expected<ChatResponse, ProviderError> SimulatedProvider::Answer(const ChatRequest& request) const {
  const RequestMetadata& meta = request.metadata;
  const SkillSimulation* skill = SimulationFor(meta.skill_id, meta.skill_version);
  const std::uint64_t request_seed =
      meta.seed.value_or(skill && skill->seed ? *skill->seed : 0) + static_cast<std::uint64_t>(meta.sample);
  const std::uint64_t seed = SimulationSeed(request, request_seed, options_.seed);
  const std::string request_id = "sim-" + Hex16(seed);
  static const std::vector<Fault> kNoFaults;
  std::vector<Fault> faults = FaultsForAttempt(skill ? skill->faults : kNoFaults, config_faults_, meta.task_id,
                                               meta.skill_version, meta.attempt);
  std::vector<Fault> firing;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (faults[i].Fires(seed, meta.attempt, i)) firing.push_back(std::move(faults[i]));
  }
  faults = std::move(firing);
  if (auto error = simulation::ErrorFault(faults)) {
    error->request_id = request_id;
    return std::unexpected(std::move(*error));
  }

  const json::value& schema = SchemaOf(request);
  Rng rng(seed);
  InstanceGenerator generator(schema, rng);
  std::optional<json::value> answer;
  if (auto repair = simulation::FindRepairRequest(request.messages)) {
    if (repair->fresh) {
      // What the original messages got, as the model would answer them again.
      Rng earlier_rng(SimulationSeed(request, request_seed, options_.seed, request.messages.size() - 1));
      answer = InstanceGenerator(schema, earlier_rng).Generate();
    } else {
      answer = simulation::ExtractJson(repair->previous_answer);
    }
    if (answer) simulation::Repair(*answer, repair->errors, generator);
  }
  if (!answer) {
    answer = generator.Generate();
    if (generator.judged()) simulation::SummariseVerdict(*answer);
  }
  simulation::ApplyValueFaults(faults, *answer, generator);

  simulation::ShapedText shaped{json::serialize(*answer), std::nullopt, FinishReason::kStop};
  simulation::ApplyTextFaults(faults, shaped);

  ChatResponse response;
  response.text = std::move(shaped.text);
  response.tool_call = request.response_format.kind == ResponseFormat::Kind::kTool;
  response.refusal = std::move(shaped.refusal);
  response.finish_reason = shaped.finish_reason;
  response.usage = EstimatedUsage(request, response.text);
  response.request_id = request_id;
  response.model = request.model;
  response.raw_body = response.text;
  response.http_status = 200;
  return response;
}

Result<SimulatedProviderOptions> SimulatedProviderOptionsFromSettings(const json::object& settings) {
  SimulatedProviderOptions options;
  if (const json::value* latency = settings.if_contains("latency_ms")) {
    auto ms = NonNegative(*latency, "latency_ms");
    if (!ms) return Fail(ErrorCode::kConfigInvalid, std::move(ms.error()));
    options.latency = std::chrono::milliseconds(static_cast<std::int64_t>(std::min<std::uint64_t>(*ms, 86400000)));
  }
  if (const json::value* seed = settings.if_contains("seed")) {
    auto value = NonNegative(*seed, "seed");
    if (!value) return Fail(ErrorCode::kConfigInvalid, std::move(value.error()));
    options.seed = *value;
  }
  if (const json::value* faults = settings.if_contains("faults")) {
    auto parsed = ParseFaultScript(*faults, FaultScriptScope::kConfig);
    if (!parsed) {
      const std::string& error = parsed.error().message;
      return Fail(ErrorCode::kConfigInvalid, "faults" + (error.starts_with("(root)") ? error.substr(6) : error));
    }
    options.faults = *faults;
  }
  return options;
}

Result<SkillSimulation> ParseSkillSimulation(const json::value& block) {
  SkillSimulation out;
  const json::object* object = block.if_object();
  if (object == nullptr) return out;
  if (const json::value* seed = object->if_contains("seed")) {
    auto value = NonNegative(*seed, "/seed");
    if (!value) return Fail(ErrorCode::kConfigInvalid, std::move(value.error()));
    out.seed = *value;
  }
  if (const json::value* faults = object->if_contains("faults")) {
    auto parsed = ParseFaultScript(*faults, FaultScriptScope::kSkill);
    if (!parsed) {
      const std::string& error = parsed.error().message;
      return Fail(ErrorCode::kConfigInvalid, "/faults" + (error.starts_with("(root)") ? error.substr(6) : error));
    }
    out.faults = std::move(*parsed);
  }
  return out;
}

Result<std::shared_ptr<SimulatedProvider>> MakeSimulatedProvider(const json::object& settings) {
  auto options = SimulatedProviderOptionsFromSettings(settings);
  if (!options) return std::unexpected(std::move(options.error()));
  return std::make_shared<SimulatedProvider>(std::move(*options));
}

}  // namespace skillrunner::providers
