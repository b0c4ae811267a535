#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <atomic>
#include <map>
#include <memory>
#include <string_view>

#include "runner/invocation.h"
#include "runner/skill_registry.h"
#include "runner/skill_service.h"

namespace skillrunner {

// The core: looks a skill up, checks its input, dispatches on template_type to
// the service registered for it, checks the output, and returns the DESIGN
// §6.1 result. Thread-safe: Invoke may run concurrently on many threads; the
// registry can be swapped while invocations run (they finish on the old one).
class SkillRunner {
 public:
  explicit SkillRunner(std::shared_ptr<const SkillRegistry> registry);

  // Registers the service for a template type (TemplateType::kHandler for
  // handler skills). Call before the first Invoke.
  void RegisterService(TemplateType type, std::shared_ptr<SkillService> service);

  std::shared_ptr<const SkillRegistry> registry() const { return registry_.load(); }
  void SwapRegistry(std::shared_ptr<const SkillRegistry> registry) { registry_.store(std::move(registry)); }

  boost::asio::awaitable<InvocationOutcome> Invoke(std::string_view skill_id,
                                                   boost::json::value input,
                                                   InvocationOptions options = {});

 private:
  std::atomic<std::shared_ptr<const SkillRegistry>> registry_;
  std::map<TemplateType, std::shared_ptr<SkillService>> services_;
};

}  // namespace skillrunner
