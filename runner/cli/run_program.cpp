#include "runner/cli/run_program.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <fstream>
#include <sstream>

#include "services/handler/process_runner.h"

namespace skillrunner::cli {

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

Ran RunProgram(std::vector<std::string> argv, std::string stdin_data) {
  handler::ProcessRequest request;
  request.argv = std::move(argv);
  request.stdin_data = std::move(stdin_data);
  request.timeout = std::chrono::seconds(120);
  request.max_output_bytes = kMaxProgramOutput;
  boost::asio::io_context io;
  handler::AsioProcessRunner runner;
  auto future = boost::asio::co_spawn(io, runner.Run(std::move(request)), boost::asio::use_future);
  io.run();
  Result<handler::ProcessOutcome> outcome = future.get();
  Ran ran;
  if (!outcome) return ran;
  ran.started = true;
  const bool whole = outcome->signal == 0 && !outcome->timed_out && !outcome->output_truncated;
  ran.status = whole ? outcome->exit_status : -1;
  ran.out = std::move(outcome->stdout_data);
  ran.err = Trimmed(std::move(outcome->stderr_tail));
  if (outcome->output_truncated) ran.err = "more than " + std::to_string(kMaxProgramOutput >> 20) + " MiB";
  if (outcome->timed_out) ran.err = "no end after 120 s";
  return ran;
}

std::optional<std::string> ReadFileText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace skillrunner::cli
