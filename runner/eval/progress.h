#pragma once

// Run progress on stderr. On a terminal: one bar redrawn in place with '\r'
// at most kRedrawsPerSecond times a second (cases done/total, pass rate so
// far, tokens, ETA). Otherwise (CI logs, files): one plain line every
// kLineInterval of wall time - also while no case finishes, so that a slow
// night (or a stuck provider) still shows it is alive - and a last line at
// the end. Thread-safe.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "runner/eval/records/case_outcome.h"
#include "services/common/clock.h"

namespace skillrunner::eval {

class Progress {
 public:
  static constexpr int kRedrawsPerSecond = 10;
  static constexpr std::chrono::seconds kLineInterval{5};
  using Duration = std::chrono::steady_clock::duration;

  // `total` counts the cases this process will run; `already` those a
  // resumed run had done before (shown, but not used for the ETA).
  // `line_interval` is for tests; `clock` must outlive the progress.
  Progress(std::FILE* out, bool terminal, std::size_t total, std::size_t already = 0,
           Duration line_interval = kLineInterval, const Clock& clock = RealClock());
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void CaseDone(CaseOutcome outcome, std::int64_t tokens);
  // Draws the final state and ends the bar's line (once).
  void Finish();

  // The text of the bar/line for the current counts (exposed for tests).
  std::string Line(Clock::TimePoint now) const;

 private:
  void DrawLocked(Clock::TimePoint now, bool final);
  Duration Interval() const;
  void Tick();  // the plain-line timer thread
  void StopTicker();

  std::FILE* out_;
  bool terminal_;
  std::size_t total_;
  std::size_t already_;
  const Clock& clock_;
  Clock::TimePoint started_;
  Clock::TimePoint last_draw_;
  mutable std::mutex mutex_;
  std::size_t done_ = 0;
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
  std::size_t errors_ = 0;
  std::size_t judge_errors_ = 0;
  std::size_t refused_ = 0;  // apart from the rate: neither passed nor failed
  std::int64_t tokens_ = 0;
  Duration line_interval_;
  bool finished_ = false;  // the ticker stops
  bool drawn_final_ = false;
  std::condition_variable wake_;
  std::thread ticker_;
};

}  // namespace skillrunner::eval
