#pragma once

// Generates a JSON instance of a JSON Schema (draft 4-7), deterministically
// from an Rng: the answers of the simulated provider.
//
// Conformance comes first, plausibility second: types (type arrays prefer
// non-null), enum/const, required and some optional properties,
// additionalProperties, numeric bounds (inclusive and exclusive, draft 4 and
// 6+), multipleOf, string lengths, formats (email, uri, uuid, date, time,
// date-time, ipv4, ipv6, hostname), `pattern` (see regex_sample.h), array
// sizes and uniqueItems, local `$ref`, anyOf/oneOf (one branch), allOf
// (merged). Recursion stops at depth 12.
//
// Judges: an array whose items have a `criterion_id` property gets exactly one
// item per criterion (its `enum`, else the hinted criteria), in order, each
// with verdict "pass", confidence 90 and a one-sentence reasoning.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/providers/simulated/schema_walk.h"
#include "services/providers/simulated/sim_random.h"

namespace skillrunner::providers::simulation {

inline constexpr int kMaxDepth = 12;

class InstanceGenerator {
 public:
  // `root_schema` and `rng` must outlive the generator. `criteria` are the
  // judge's criterion ids (used when the schema names none).
  InstanceGenerator(const boost::json::value& root_schema, Rng& rng, std::vector<std::string> criteria = {});
  InstanceGenerator(const boost::json::value&& root_schema, Rng& rng,
                    std::vector<std::string> criteria = {}) = delete;  // would dangle

  // An instance of the root schema (`{}` for a null schema).
  boost::json::value Generate();

  // An instance of `schema` (a sub-schema of the root), for a value named
  // `name` (its property name, or "" for none), `depth` levels down.
  boost::json::value GenerateFor(const boost::json::value& schema, std::string_view name, int depth);

  // Whether some array was filled in judge mode (one item per criterion).
  bool judged() const { return judged_; }

  const SchemaWalker& walker() const { return walker_; }
  Rng& rng() { return rng_; }

 private:
  boost::json::value FromEffective(const boost::json::object& schema, std::string_view name, int depth);
  boost::json::value PickBranch(const boost::json::object& schema, const boost::json::value& branches,
                                std::string_view name, int depth);
  std::string PickType(const boost::json::object& schema);
  boost::json::value Object(const boost::json::object& schema, int depth);
  // The keys an object instance gets: required ones, a random share of the
  // optional ones (above kOptionalDepth), dependencies, and enough to reach
  // minProperties.
  std::vector<std::string> ChooseKeys(const boost::json::object& schema, const boost::json::object& props, int depth);
  boost::json::value Array(const boost::json::object& schema, std::string_view name, int depth);
  std::optional<boost::json::value> JudgeArray(const boost::json::object& schema, int depth);
  boost::json::value JudgeItem(const boost::json::object& item_schema, const std::string& id, int depth);

  const boost::json::value& root_;
  SchemaWalker walker_;
  Rng& rng_;
  std::vector<std::string> criteria_;
  bool judged_ = false;
  // What is left to write (kMaxValues): a value each, a string one more per
  // 4 characters. Spent, arrays and objects stop at what they have.
  std::int64_t left_;
};

// Scalars (schema_scalars.cpp). `name` is the property name, for plausibility.
boost::json::value GenerateString(const boost::json::object& schema, std::string_view name, Rng& rng);
boost::json::value GenerateNumber(const boost::json::object& schema, bool integer, std::string_view name, Rng& rng);

// A plausible text for a property name ("name" -> a person's name, "summary"
// -> a sentence, "email" -> an address), or nullopt (plausible_text.cpp).
std::optional<std::string> PlausibleText(std::string_view name, Rng& rng);
// A value of a string `format`, or nullopt for a format it does not know.
std::optional<std::string> FormatSample(std::string_view format, std::string_view name, Rng& rng);
// One short sentence.
std::string Sentence(Rng& rng);
// One plain word.
std::string Word(Rng& rng);

}  // namespace skillrunner::providers::simulation
