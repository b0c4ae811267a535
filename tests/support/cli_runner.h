#pragma once

// Runs the real `skillrunner` program as a user would and captures what it
// prints and its exit status.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace skillrunner::test_support {

struct CommandResult {
  int status = -1;
  std::string out;
};

inline std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `skillrunner ARGS REDIRECT` in `dir` with no provider settings in its
// environment and captures its stdout (`redirect` decides about stderr:
// "2>&1" to capture it too). `env_vars`: NAME=value words to set.
inline CommandResult Skillrunner(const std::filesystem::path& dir, const std::string& args,
                                 const std::string& redirect = "2>/dev/null", const std::string& env_vars = "") {
  std::string command =
      "cd " + ShellQuote(dir.string()) + " && env -u SKILLRUNNER_PROVIDER -u OPENAI_API_KEY -u ANTHROPIC_API_KEY " +
      "-u OTEL_EXPORTER_OTLP_ENDPOINT -u OTEL_EXPORTER_OTLP_TRACES_ENDPOINT -u OTEL_EXPORTER_OTLP_HEADERS "
      "-u OTEL_SERVICE_NAME -u GEMINI_API_KEY " +
      env_vars + " " + ShellQuote(SKILLRUNNER_BINARY) + " " + args + " " + redirect;
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) result.out.append(buffer.data(), n);
  int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

}  // namespace skillrunner::test_support
