#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "runner/tree/skill.h"
#include "services/common/error.h"
#include "services/common/invocation.h"

namespace skillrunner {

// What SkillRunner dispatches a template_type to (runner/skill_services.h
// adapts the services; tests substitute their own). Run records the attempts
// it ends and returns the output, with its producing attempt when that is
// still to be recorded (the runner checks the output, then records it).
class SkillService {
 public:
  virtual ~SkillService() = default;
  virtual boost::asio::awaitable<Result<Produced>> Run(const Skill& skill, const boost::json::value& input,
                                                       InvocationContext& ctx) = 0;

  // True when Run already validated its output against the skill's
  // output_schema, so the runner does not validate it a second time.
  virtual bool ValidatesOutput() const { return false; }
};

}  // namespace skillrunner
