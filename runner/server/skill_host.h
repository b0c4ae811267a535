#pragma once

#include <boost/json/array.hpp>
#include <memory>

#include "runner/skill_runner.h"

namespace skillrunner::server {

// What the server runs skills with. The runner returned by Current() stays
// alive as long as the caller holds it, so invocations finish on the registry
// they started with while a reload swaps in a new one. Thread-safe.
class SkillHost {
 public:
  struct ReloadReport {
    bool ok = false;                 // false: the old registry stays
    boost::json::array diagnostics;  // [{file,line,col,pointer,severity,message}]
    std::size_t skills = 0;
    std::size_t rubrics = 0;
  };

  virtual ~SkillHost() = default;
  virtual std::shared_ptr<SkillRunner> Current() = 0;
  // Loads the tree again; swaps only when it loaded without errors.
  virtual ReloadReport Reload() = 0;
};

}  // namespace skillrunner::server
