#pragma once

// `skillrunner view --export DIR`: the viewer's pages as static files that
// open from the folder alone (file://, no server, nothing fetched): each page
// is the served shell with its API answer inlined (view_pages.h). Written:
//   index.html, rollouts.html, assets/app.js, assets/app.css,
//   suites/<suite>.html, runs/<run>.html (the newest `runs` of each suite),
//   compare/<run>__<baseline>.html (each of those runs against its baseline),
//   cases/<suite>__<skill>__<case>.html (each case of the suite's newest run
//   across its newest `case_runs` runs; "__<repeat>" added for a repeat > 0),
// names as ExportName writes them.

#include <cstddef>
#include <filesystem>

#include "runner/eval/history/history_reader.h"
#include "services/common/error.h"

namespace skillrunner::view {

struct ExportOptions {
  std::size_t runs = 100;      // per suite
  std::size_t case_runs = 20;  // per case page
};

// The number of pages written; INTERNAL naming the file that could not be written.
Result<std::size_t> ExportView(eval::HistoryReader& history, const std::filesystem::path& dir,
                               const ExportOptions& options);

}  // namespace skillrunner::view
