#include "runner/view/view_export.h"

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/records/results_log.h"
#include "runner/view/view_api.h"
#include "runner/view/view_pages.h"

namespace skillrunner::view {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

struct Exporter {
  ViewApi api;
  eval::HistoryReader& history;
  fs::path dir;
  ExportOptions options;
  std::size_t pages = 0;

  Result<void> Write(const fs::path& relative, std::string_view text) {
    const fs::path file = dir / relative;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) return Fail(ErrorCode::kInternal, "cannot create " + file.parent_path().string() + ": " + ec.message());
    return eval::WriteFileAtomically(file, text);
  }

  Result<void> Page(const fs::path& relative, std::string_view page, Result<json::object> data) {
    if (!data) return std::unexpected(std::move(data.error()));
    const bool top = relative.parent_path().empty();
    if (auto written = Write(relative, ExportedPage(page, top ? "" : "../", *data)); !written) return written;
    ++pages;
    return {};
  }

  Result<void> Cases(const eval::RunRow& newest) {
    auto records = history.Records(newest.run_id);
    if (!records) return std::unexpected(std::move(records.error()));
    for (const json::object& record : *records) {
      const std::string skill = eval::SkillLabel(record);
      const std::string case_id(eval::CaseIdOf(record));
      const std::int64_t repeat = eval::RepeatOf(record);
      std::string name = ExportName(newest.suite) + "__" + ExportName(skill) + "__" + ExportName(case_id);
      if (repeat > 0) name += "__" + std::to_string(repeat);
      auto page = Page(fs::path("cases") / (name + ".html"), "case",
                       api.Case(newest.suite, skill, case_id, repeat, options.case_runs));
      if (!page) return page;
    }
    return {};
  }

  Result<void> Run(const eval::RunRow& run) {
    if (auto page = Page(fs::path("runs") / (ExportName(run.run_id) + ".html"), "run", api.Run(run.run_id)); !page) {
      return page;
    }
    if (run.summary.versions && !run.summary.versions->empty()) {
      auto page = Page(fs::path("versions") / (ExportName(run.run_id) + ".html"), "versions", api.Versions(run.run_id));
      if (!page) return page;
    }
    auto baseline = api.BaselineOf(run);
    if (!baseline) return std::unexpected(std::move(baseline.error()));
    if (!*baseline) return {};
    const std::string name = ExportName(run.run_id) + "__" + ExportName((*baseline)->run_id) + ".html";
    return Page(fs::path("compare") / name, "compare", api.Compare(run.run_id, (*baseline)->run_id));
  }

  Result<void> Suite(const eval::SuiteRow& suite) {
    auto written = Page(fs::path("suites") / (ExportName(suite.suite) + ".html"), "suite",
                        api.Suite(suite.suite, {}, options.runs));
    if (!written) return written;
    auto runs = history.Runs(suite.suite, options.runs);
    if (!runs) return std::unexpected(std::move(runs.error()));
    for (const eval::RunRow& run : *runs) {
      if (auto done = Run(run); !done) return done;
    }
    return runs->empty() ? Result<void>() : Cases(runs->back());
  }

  Result<void> All() {
    for (const char* asset : {"app.js", "app.css"}) {
      auto found = FindAsset(asset);
      if (!found) return Fail(ErrorCode::kInternal, std::string("the asset ") + asset + " is not compiled in");
      if (auto written = Write(fs::path("assets") / asset, found->body); !written) return written;
    }
    if (auto index = Page("index.html", "suites", api.Suites()); !index) return index;
    if (auto rollouts = Page("rollouts.html", "rollouts", api.Rollouts()); !rollouts) return rollouts;
    auto suites = history.Suites();
    if (!suites) return std::unexpected(std::move(suites.error()));
    for (const eval::SuiteRow& suite : *suites) {
      if (auto done = Suite(suite); !done) return done;
    }
    return {};
  }
};

}  // namespace

Result<std::size_t> ExportView(eval::HistoryReader& history, const fs::path& dir, const ExportOptions& options) {
  Exporter exporter{ViewApi(history), history, dir, options};
  if (auto done = exporter.All(); !done) return Fail(std::move(done.error()), "cannot export to " + dir.string());
  return exporter.pages;
}

}  // namespace skillrunner::view
