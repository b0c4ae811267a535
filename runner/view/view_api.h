#pragma once

// The viewer's JSON API (design.md §11.3), answered from a read-only history:
//   /api/suites                      every suite, its newest run
//   /api/suites/<suite>              a suite's runs and each measure's trend (Wilson 95% bands)
//   /api/runs/<run>                  a run: breaches, measures, cases with their flags
//   /api/runs/<run>/case             one case's whole record (?skill=&case=&repeat=)
//   /api/compare?a=&b=               two runs paired case by case (b: a's baseline by default)
//   /api/cases?suite=&skill=&case=   a case across the newest runs
//   /api/rollouts                    rollouts recorded in the history
// Each answer's schema is schemas/view/<name>.schema.json. The same objects
// fill the static export's pages. Not thread-safe (the history reader is not).

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/history/history_reader.h"
#include "runner/view/view_json.h"
#include "services/common/error.h"

namespace skillrunner::view {

using Query = std::map<std::string, std::string, std::less<>>;

// An answer: the HTTP status and its JSON body; a failure's body is
// {"error": {"code": "NOT_FOUND" | "INVALID_PARAMS" | "INTERNAL", "message"}}.
struct ApiAnswer {
  int status = 200;
  boost::json::object body;
};

class ViewApi {
 public:
  explicit ViewApi(eval::HistoryReader& history) : history_(history) {}

  // `segments`: the decoded path after /api/ ({"runs", "RUN_ID"}).
  ApiAnswer Get(const std::vector<std::string>& segments, const Query& query);

  Result<boost::json::object> Suites();
  Result<boost::json::object> Suite(std::string_view suite, const SuiteFilter& filter, std::size_t limit);
  Result<boost::json::object> Run(std::string_view run_id);
  Result<boost::json::object> CaseRecord(std::string_view run_id, std::string_view skill, std::string_view case_id,
                                         std::int64_t repeat);
  // `b` empty: a's baseline (the run its summary was compared with, else the whole run before it).
  Result<boost::json::object> Compare(std::string_view a, std::string_view b);
  Result<boost::json::object> Case(std::string_view suite, std::string_view skill, std::string_view case_id,
                                   std::int64_t repeat, std::size_t limit);
  Result<boost::json::object> Rollouts();
  // design.md §12.3: a `versions: both` run's candidate against its stable version, per skill.
  Result<boost::json::object> Versions(std::string_view run_id);

  // The run `run` is compared with by default; nullopt when it is its suite's first.
  Result<std::optional<eval::RunRow>> BaselineOf(const eval::RunRow& run);

 private:
  Result<eval::RunRow> FindRun(std::string_view run_id);
  eval::HistoryReader& history_;
};

// A not-found failure (HTTP 404) and a bad-parameter one (400), for the answers above.
std::unexpected<Error> NotFound(std::string message);
std::unexpected<Error> BadParams(std::string message);

}  // namespace skillrunner::view
