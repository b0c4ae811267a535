#pragma once

#include <boost/json/array.hpp>
#include <functional>
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
    boost::json::array failed;       // ok under --allow-broken: what did not load, as Failed()
    boost::json::array changed;      // ok: skills.changed's params, one per skill whose schemas changed
    std::size_t skills = 0;
    std::size_t rubrics = 0;
  };

  virtual ~SkillHost() = default;
  virtual std::shared_ptr<SkillRunner> Current() = 0;
  // Loads the tree again; swaps only when it loaded without errors (with
  // serve --allow-broken: whenever the config and providers did), calling
  // `before_swap` first, so that what counts reloads never lags the tree.
  virtual ReloadReport Reload(const std::function<void()>& before_swap) = 0;
  // What the tree in service left out: one {file, line, col, message} per
  // error of a skill or rubric that did not load (only --allow-broken serves
  // such a tree); empty when everything loaded.
  virtual boost::json::array Failed() = 0;
};

}  // namespace skillrunner::server
