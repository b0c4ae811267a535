#pragma once

// Helpers for tests of the simulated provider: skill fault scripts handed to
// it as the composition root hands over a skill's `simulation:` block, and
// schemas that live as long as the requests that point at them.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "services/providers/simulated/simulated_provider.h"

namespace skillrunner::test_support {

// Gives `provider` the fault script `faults` (JSON; "null" for none) of skill
// `skill`. The script must be valid.
inline void ScriptSkill(providers::SimulatedProvider& provider, const std::string& skill, std::string_view faults) {
  boost::json::object block;
  block["faults"] = boost::json::parse(faults);
  auto parsed = providers::ParseSkillSimulation(block);
  ASSERT_TRUE(parsed) << parsed.error().message;
  std::map<std::string, providers::SkillSimulation, std::less<>> skills;
  skills.emplace(skill, std::move(*parsed));
  provider.SetSkillSimulations(std::move(skills));
}

// `json_text` parsed once and kept for the life of the test process
// (RequestMetadata::answer_schema points at it).
inline const boost::json::value& PersistentJson(std::string_view json_text) {
  static std::mutex mutex;
  static std::map<std::string, boost::json::value, std::less<>> values;
  std::lock_guard lock(mutex);
  auto it = values.find(json_text);
  if (it == values.end()) it = values.emplace(std::string(json_text), boost::json::parse(json_text)).first;
  return it->second;
}

}  // namespace skillrunner::test_support
