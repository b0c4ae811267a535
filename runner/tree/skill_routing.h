#pragma once

// Where a skill's calls go: its model (and its review gate's) checked against
// the config's models table, the structured output mode and the strict wire
// schema its provider takes, and the services' specs with their fallback and
// escalation routes.

#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>

#include "runner/tree/config.h"
#include "runner/tree/descriptor_reader.h"
#include "runner/tree/skill.h"
#include "services/generation/generation_spec.h"

namespace skillrunner {

class SkillRouting {
 public:
  SkillRouting(DescriptorReader& reader, const Config& config, Skill& skill)
      : reader_(reader), config_(config), skill_(skill) {}

  // A model not in the models table is an error naming the closest ones,
  // unless the config sets default_provider: then a warning says where it goes.
  void CheckModel();
  // The output mode, and for native/tool the strict wire schema (null when
  // none is needed); a schema the provider cannot take is an error.
  boost::json::value ResolveOutputMode();
  // The services' settings of this skill.
  void MakeSpecs(boost::json::value strict_wire);

 private:
  std::optional<Price> PriceOf(const std::string& model) const;
  generation::ModelRoute Route(const std::string& model,
                               const std::shared_ptr<const generation::AnswerSchema>& primary);

  DescriptorReader& reader_;
  const Config& config_;
  Skill& skill_;
  bool wire_wrapped_ = false;  // the strict wire schema wraps the root as {"value": ...}
};

}  // namespace skillrunner
