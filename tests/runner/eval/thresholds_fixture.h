#pragma once

// One skill "s" judged by rubric "r" in suite "nightly", and the breach
// messages CheckThresholds gives for a summary: for threshold tests.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/eval/suite.h"
#include "runner/eval/thresholds.h"
#include "tests/runner/eval/summary_json.h"

namespace skillrunner::eval {

class ThresholdsFixture : public ::testing::Test {
 protected:
  ThresholdsFixture() {
    skill_.id = "s";
    entry_.skill = &skill_;
    entry_.label = "s";
    entry_.rubric = "r";
    suite_.id = "nightly";
  }
  std::vector<std::string> Messages(const boost::json::object& summary) {
    suite_.skills = {entry_};
    std::vector<std::string> out;
    for (const auto& b : CheckThresholds(summary, suite_)) out.emplace_back(b.at("message").as_string());
    return out;
  }
  Skill skill_;
  SuiteSkill entry_;
  Suite suite_;
};

}  // namespace skillrunner::eval
