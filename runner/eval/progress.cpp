#include "runner/eval/progress.h"

#include <cmath>

namespace skillrunner::eval {

Progress::Progress(std::FILE* out, bool terminal, std::size_t total, std::size_t already, Duration line_interval,
                   const Clock& clock)
    : out_(out),
      terminal_(terminal),
      total_(total),
      already_(already),
      clock_(clock),
      started_(clock.Now()),
      line_interval_(line_interval) {
  // A bar shows up with the first case; plain lines wait a full interval.
  last_draw_ = terminal_ ? started_ - Interval() : started_;
  if (!terminal_) ticker_ = std::thread([this] { Tick(); });
}

Progress::~Progress() { StopTicker(); }

Progress::Duration Progress::Interval() const {
  if (terminal_) return std::chrono::milliseconds(1000 / kRedrawsPerSecond);
  return line_interval_;
}

void Progress::Tick() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    Clock::TimePoint due = last_draw_ + Interval();
    if (clock_.Now() >= due) {
      DrawLocked(clock_.Now(), false);
      continue;
    }
    wake_.wait_until(lock, due);
  }
}

void Progress::StopTicker() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void Progress::CaseDone(CaseOutcome outcome, std::int64_t tokens) {
  std::lock_guard lock(mutex_);
  ++done_;
  tokens_ += tokens;
  switch (outcome) {
    case CaseOutcome::kPass:
      ++passed_;
      break;
    case CaseOutcome::kFail:
      ++failed_;
      break;
    case CaseOutcome::kError:
      ++errors_;
      break;
    case CaseOutcome::kJudgeError:
      ++judge_errors_;
      break;
    case CaseOutcome::kRefused:
      ++refused_;
      break;
  }
  Clock::TimePoint now = clock_.Now();
  if (now - last_draw_ >= Interval()) DrawLocked(now, false);
}

void Progress::Finish() {
  if (ticker_.joinable()) StopTicker();
  std::lock_guard lock(mutex_);
  if (drawn_final_) return;
  drawn_final_ = true;
  DrawLocked(clock_.Now(), true);
}

std::string Progress::Line(Clock::TimePoint now) const {
  std::size_t all = total_ + already_;
  std::size_t done = done_ + already_;
  // Cases passed: every gate (schema, expected, rubric) passed, of the cases
  // decided (judge errors say nothing either way); the report's "Cases
  // passed" is the same figure (design.md §9.5).
  std::size_t decided = passed_ + failed_ + errors_;
  char rate[16] = "-";
  if (decided > 0) std::snprintf(rate, sizeof rate, "%.1f%%", 100.0 * static_cast<double>(passed_) / decided);
  std::string eta = "-";
  double elapsed = std::chrono::duration<double>(now - started_).count();
  if (done_ > 0 && done_ < total_) {
    double left = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    int seconds = static_cast<int>(std::lround(left));
    eta = seconds >= 60 ? std::to_string(seconds / 60) + "m" + std::to_string(seconds % 60) + "s"
                        : std::to_string(seconds) + "s";
  } else if (done_ == total_) {
    eta = "0s";
  }
  char refused[32] = "";
  if (refused_ > 0) std::snprintf(refused, sizeof refused, ", %zu refused", refused_);
  char line[256];
  std::snprintf(line, sizeof line,
                "%zu/%zu cases, cases passed %s, %zu failed, %zu errors, %zu judge errors%s, %lld tokens, ETA %s", done,
                all, rate, failed_, errors_, judge_errors_, refused, static_cast<long long>(tokens_), eta.c_str());
  if (!terminal_) return std::string("eval: ") + line;
  constexpr int kWidth = 24;
  int filled = all == 0 ? kWidth : static_cast<int>(kWidth * done / all);
  return "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " + line;
}

void Progress::DrawLocked(Clock::TimePoint now, bool final) {
  last_draw_ = now;
  std::string text = Line(now);
  if (terminal_) {
    // \033[K clears what a longer previous line left behind.
    std::fprintf(out_, "\r%s\033[K%s", text.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

}  // namespace skillrunner::eval
