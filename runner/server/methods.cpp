#include "runner/server/methods.h"

#include <array>

#include "runner/rollout_report.h"
#include "runner/tree/skill_json.h"

namespace skillrunner::server {
namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 10> kMethods = {
    "skills.invoke", "skills.list", "skills.describe", "skills.reload", "rollouts.list",
    "health",        "metrics",     "$/cancel",        "auth",          "rpc.discover"};

json::object ApplicationError(const json::value& id, ErrorCode code, std::string message, json::object extra = {}) {
  json::object data{{"code", ErrorCodeName(code)}, {"message", message}};
  for (auto& [key, value] : extra) data[key] = value;
  return ErrorAnswer(id, JsonRpcCodeFor(code), message, std::move(data));
}

json::object Describe(Server::State& state, const Call& call) {
  const json::value* skill = ParamMember(call.params, "skill");
  if (!skill || !skill->is_string()) {
    return InvalidParamsAnswer(call.id, {{"/skill", "expected a skill id (string)"}});
  }
  auto registry = state.host.Current()->registry();
  const Skill* found = registry->FindSkill(skill->as_string());
  if (!found) {
    std::string message = "unknown skill \"" + std::string(skill->as_string()) + "\"";
    auto similar = registry->SimilarSkillIds(skill->as_string());
    if (!similar.empty()) message += " (did you mean \"" + similar.front() + "\"?)";
    return ApplicationError(call.id, ErrorCode::kSkillNotFound, message);
  }
  return ResultAnswer(call.id, SkillDescriptionJson(*found, *registry));
}

// rollouts.list {skill?}: every rollout of the tree in service, as this process counts it.
json::object ListRollouts(Server::State& state, const Call& call) {
  const json::value* skill = ParamMember(call.params, "skill");
  if (skill && !skill->is_string()) return InvalidParamsAnswer(call.id, {{"/skill", "expected a skill id (string)"}});
  std::shared_ptr<SkillRunner> runner = state.host.Current();
  json::array rollouts;
  if (runner->rollouts()) {
    rollouts = RolloutsReport(*runner->registry(), *runner->rollouts(), skill ? skill->as_string() : "");
  }
  return ResultAnswer(call.id, json::object{{"rollouts", std::move(rollouts)}});
}

json::object Reload(Server::State& state, const Call& call) {
  SkillHost::ReloadReport report = state.Reload();
  json::object result{{"ok", report.ok},
                      {"skills", report.skills},
                      {"rubrics", report.rubrics},
                      {"diagnostics", report.diagnostics},
                      {"failed", report.failed}};
  if (report.ok) return ResultAnswer(call.id, std::move(result));
  return ApplicationError(call.id, ErrorCode::kConfigInvalid, "reload failed; the previous skills stay in service",
                          json::object{{"diagnostics", report.diagnostics}});
}

}  // namespace

bool IsKnownMethod(std::string_view method) {
  for (auto m : kMethods) {
    if (m == method) return true;
  }
  return false;
}

json::object UnauthorizedAnswer(const json::value& id, std::string_view why) {
  return ApplicationError(id, ErrorCode::kUnauthorized, "unauthorized: " + std::string(why));
}

json::object HandleSimpleMethod(Server::State& state, const Call& call) {
  if (call.method == "skills.list") {
    json::array items;
    for (const auto& skill : state.host.Current()->registry()->skills()) items.push_back(SkillSummaryJson(*skill));
    return ResultAnswer(call.id, std::move(items));
  }
  if (call.method == "skills.describe") return Describe(state, call);
  if (call.method == "skills.reload") return Reload(state, call);
  if (call.method == "rollouts.list") return ListRollouts(state, call);
  if (call.method == "health") return ResultAnswer(call.id, state.Health());
  if (call.method == "metrics") {
    json::object result = state.metrics.ToJson();
    result["prometheus"] = state.metrics.Prometheus();
    return ResultAnswer(call.id, std::move(result));
  }
  if (call.method == "rpc.discover") {
    json::array methods;
    for (auto m : kMethods) methods.push_back(json::string(m));
    return ResultAnswer(call.id, json::object{{"methods", std::move(methods)}});
  }
  return ErrorAnswer(call.id, kMethodNotFound, "Method not found: \"" + call.method + "\"",
                     json::object{{"method", call.method}});
}

}  // namespace skillrunner::server
