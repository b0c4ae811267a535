#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "runner/error.h"
#include "runner/invocation.h"
#include "runner/skill.h"

namespace skillrunner {

// The work behind one template_type (or behind handler skills). Implementations
// record every attempt in `ctx` and return the output; SkillRunner checks the
// input before and, unless the service did, the output against output_schema.
class SkillService {
 public:
  virtual ~SkillService() = default;
  virtual boost::asio::awaitable<Result<boost::json::value>> Run(
      const Skill& skill, const boost::json::value& input,
      InvocationContext& ctx) = 0;

  // True when Run already validated its output against the skill's
  // output_schema (the generation loop does, as part of its retry), so the
  // runner does not validate it a second time.
  virtual bool ValidatesOutput() const { return false; }
};

}  // namespace skillrunner
