#include "runner/cli/cli.h"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "runner/cli/codegen_command.h"
#include "runner/cli/environment.h"
#include "runner/cli/eval_command.h"
#include "runner/cli/import_command.h"
#include "runner/cli/providers_command.h"
#include "runner/cli/rollout_command.h"
#include "runner/cli/serve_command.h"
#include "runner/cli/tree_at_ref.h"
#include "runner/cli/tree_cache.h"
#include "runner/cli/view_command.h"
#include "runner/eval/suite.h"
#include "runner/logging.h"
#include "runner/tree/key_reference.h"
#include "runner/tree/lint_codes.h"
#include "runner/tree/schema_changes.h"
#include "runner/tree/skill_json.h"
#include "runner/tree/tree_index.h"
#include "services/common/json_text.h"
#include "services/common/stream_events.h"
#include "services/common/stream_timer.h"

namespace skillrunner::cli {
namespace json = boost::json;
namespace {

constexpr int kUsageStatus = 2;

struct RunOptions {
  std::string skill;
  std::string input;
  std::string input_file;
  bool pretty = false;
  std::int64_t timeout_ms = 0;
  std::int64_t seed = -1;
  std::string session;
  int version = 0;
  bool show_request = false;
  std::string traceparent;
  bool no_tree_cache = false;
  bool stream = false;
  std::int64_t partial_interval_ms = kDefaultPartialInterval.count();
};

void PrintJson(const json::value& value, bool pretty) {
  std::string text = pretty ? PrettyJson(value) : CompactJson(value);
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// A front-door failure before any skill ran (bad --input, broken config).
int PrintFailure(Error error, bool pretty) {
  const int status = ExitStatusFor(error.code);
  InvocationFailure failure{std::move(error), {}, {}};
  PrintJson(json::object{{"error", ErrorToJson(failure)}}, pretty);
  return status;
}

int PrintFailure(ErrorCode code, std::string message, bool pretty, std::vector<FieldError> errors = {}) {
  return PrintFailure(Error{code, std::move(message), std::move(errors), {}}, pretty);
}

// Problems in other files are worth a warning; notes about them are debug.
void LogDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    if (d.acknowledged) continue;
    if (d.severity == Diagnostic::Severity::kError) {
      spdlog::warn("{}", d.ToString());
    } else {
      spdlog::debug("{}", d.ToString());
    }
  }
}

std::string JoinDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (d.severity != Diagnostic::Severity::kError) continue;
    if (!out.empty()) out += "; ";
    out += d.ToString();
  }
  return out;
}

// `run --stream`: each event as the socket's notification would be, with
// "id": null, on a line of its own as soon as it happens.
void PrintStreamEvent(std::string_view method, json::object params) {
  params["id"] = nullptr;
  std::string line = CompactJson(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

std::expected<json::value, std::string> ReadInput(const RunOptions& options) {
  std::string text = options.input;
  std::string where = "--input";
  if (!options.input_file.empty()) {
    where = options.input_file;
    std::ostringstream buffer;
    if (options.input_file == "-") {
      buffer << std::cin.rdbuf();
    } else {
      std::ifstream in(options.input_file, std::ios::binary);
      if (!in) return std::unexpected("cannot read " + options.input_file);
      buffer << in.rdbuf();
    }
    text = buffer.str();
  }
  auto value = ParseJsonText(text);
  if (!value) return std::unexpected(where + " is not valid JSON: " + value.error());
  return std::move(*value);
}

int Run(const CommonOptions& common, const RunOptions& options) {
  auto input = ReadInput(options);
  if (!input) return PrintFailure(ErrorCode::kInputInvalid, input.error(), options.pretty);
  const std::int64_t started_ns = CoarseNowNs();
  auto config = ResolveConfig(common);
  if (!config) {
    return PrintFailure(ErrorCode::kConfigInvalid, JoinDiagnostics(config.error()), options.pretty);
  }
  auto cache_dir = options.no_tree_cache ? std::nullopt : TreeCacheDir(ProcessEnv);
  auto loaded = LoadRegistryForRun(common, std::move(*config), options.skill, cache_dir, started_ns);
  LogDiagnostics(loaded.diagnostics);
  if (!loaded.registry->FindSkill(options.skill) && HasErrors(loaded.diagnostics)) {
    spdlog::warn("some skill files failed to load; `skillrunner validate` lists them");
  }
  auto tracing = StartTracing(loaded.registry->config(), ProcessEnv);
  if (!tracing) return PrintFailure(std::move(tracing.error()), options.pretty);
  boost::asio::io_context io;
  RuntimeOptions runtime_options{nullptr, {}, *tracing};
  runtime_options.process_pools =
      std::make_shared<handler::ProcessPools>(HandlerConcurrency(common, loaded.registry->config()));
  auto runtime = Runtime::Create(loaded.registry, io.get_executor(), std::move(runtime_options));
  if (!runtime) return PrintFailure(std::move(runtime.error()), options.pretty);
  InvocationOptions invocation;
  if (options.timeout_ms > 0) invocation.timeout = std::chrono::milliseconds(options.timeout_ms);
  if (options.seed >= 0) invocation.seed = static_cast<std::uint64_t>(options.seed);
  if (!options.session.empty()) invocation.session = options.session;
  if (options.version > 0) invocation.version = options.version;
  invocation.show_request = options.show_request;
  if (!options.traceparent.empty()) invocation.traceparent = ParseTraceparent(options.traceparent);
  StreamEvents events(PrintStreamEvent, std::chrono::milliseconds(options.partial_interval_ms), RealClock(),
                      MakeClockTimer(RealClock(), io.get_executor()));
  if (options.stream) invocation.stream = &events;

  std::optional<InvocationOutcome> outcome;
  std::exception_ptr failure;
  boost::asio::co_spawn(io, (*runtime)->runner().Invoke(options.skill, std::move(*input), invocation),
                        [&](std::exception_ptr e, InvocationOutcome result) {
                          failure = e;
                          if (!e) outcome = std::move(result);
                        });
  io.run();
  if (failure) std::rethrow_exception(failure);
  events.Flush();  // a held-back partial before the answer
  PrintJson(ToJson(*outcome), options.pretty);
  if (*tracing) (*tracing)->Shutdown();  // the spans go out before the process does
  if (!*outcome) return ExitStatusFor(outcome->error().error.code);
  // A gated output whose final review still failed (design.md §6.1).
  const auto& review = (*outcome)->review;
  return review && ReviewFailed(*review) ? 5 : 0;
}

struct ValidateOptions {
  bool as_json = false;
  bool strict = false;
  std::vector<std::string> allow;   // warning codes acknowledged for this check
  std::string against = "HEAD";     // the git ref whose skills the schemas are compared with; "none"
  std::vector<std::string> suites;  // --suite: eval suites whose datasets are checked too
};

struct Tally {
  std::size_t errors = 0;
  std::size_t warnings = 0;  // not acknowledged
  std::size_t allowed = 0;
};

Tally Count(const std::vector<Diagnostic>& diagnostics) {
  Tally tally;
  for (const auto& d : diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) {
      ++tally.errors;
    } else {
      ++(d.acknowledged ? tally.allowed : tally.warnings);
    }
  }
  return tally;
}

// What validate compared the schemas with: {ref, commit}, or null and why not.
struct Comparison {
  json::value against;
  std::string not_compared;
};

// design.md §11.7: each skill's schemas against the same skill at `ref` (a breaking change needs a
// higher version: code breaking-change). The error is a usage error (a ref that names no commit).
std::expected<Comparison, std::string> CompareWithRef(const CommonOptions& common, const Config& config,
                                                      const SkillRegistry& now, const std::string& ref,
                                                      std::vector<Diagnostic>& diagnostics) {
  if (ref == "none") return Comparison{nullptr, "--against none"};
  RefLookup lookup = LookUpTreeAt(ref, common.skills_dir, common.rubrics_dir);
  if (!lookup.error.empty()) return std::unexpected(std::move(lookup.error));
  if (!lookup.tree) return Comparison{nullptr, std::move(lookup.not_compared)};
  CommonOptions then = common;
  then.skills_dir = lookup.tree->skills_dir.string();
  then.rubrics_dir = lookup.tree->rubrics_dir.string();
  auto before = LoadRegistry(then, config);
  SchemaChanges(*before.registry, now, diagnostics);
  return Comparison{json::object{{"ref", ref}, {"commit", lookup.tree->commit}}, {}};
}

// The tree's diagnostics (and the comparison with --against's ref); a usage error is a message.
struct Validated {
  std::vector<Diagnostic> diagnostics;
  std::shared_ptr<const SkillRegistry> registry;
  Comparison comparison;
};

// design.md §12.3: every skill's cases.jsonl, and (--suite) every dataset those suites name, with
// the messages eval would give; a problem two of them share is said once.
void AddDatasetDiagnostics(const SkillRegistry& registry, const std::vector<std::string>& suites,
                           std::vector<Diagnostic>& diagnostics) {
  std::vector<Diagnostic> found = eval::CheckSkillDatasets(registry);
  for (const std::string& file : suites) {
    auto suite = eval::LoadSuite(file, registry);
    for (auto& d : suite ? suite->warnings : suite.error()) found.push_back(std::move(d));
  }
  std::stable_sort(found.begin(), found.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.file, a.position.line) < std::tie(b.file, b.position.line);
  });
  std::set<std::string> shown;
  for (const Diagnostic& d : diagnostics) shown.insert(d.ToString());
  for (auto& d : found) {
    if (shown.insert(d.ToString()).second) diagnostics.push_back(std::move(d));
  }
}

std::expected<Validated, std::string> LoadAndCompare(const CommonOptions& common, const ValidateOptions& options) {
  Validated validated;
  auto config = ResolveConfig(common);
  if (!config) {
    validated.diagnostics = config.error();
    return validated;
  }
  auto loaded = LoadRegistry(common, *config);
  validated.diagnostics = std::move(loaded.diagnostics);
  validated.registry = loaded.registry;
  AddDatasetDiagnostics(*validated.registry, options.suites, validated.diagnostics);
  auto compared = CompareWithRef(common, *config, *validated.registry, options.against, validated.diagnostics);
  if (!compared) return std::unexpected("--against " + options.against + ": " + compared.error());
  validated.comparison = std::move(*compared);
  return validated;
}

int Validate(const CommonOptions& common, const ValidateOptions& options) {
  for (const std::string& slug : options.allow) {
    if (std::string why = AllowProblem(slug); !why.empty()) {
      std::fprintf(stderr, "skillrunner validate: --allow: %s\n", why.c_str());
      return kUsageStatus;
    }
  }
  auto validated = LoadAndCompare(common, options);
  if (!validated) {
    std::fprintf(stderr, "skillrunner validate: %s\n", validated.error().c_str());
    return kUsageStatus;
  }
  auto& [diagnostics, registry, comparison] = *validated;
  Acknowledge(diagnostics, 0, options.allow);
  const Tally tally = Count(diagnostics);
  const bool strict_fails = options.strict && tally.warnings > 0;
  std::size_t skills = registry ? registry->skills().size() : 0;
  std::size_t rubrics = registry ? registry->rubrics().size() : 0;
  if (options.as_json) {
    json::object out{{"ok", tally.errors == 0 && !strict_fails},
                     {"skills", skills},
                     {"rubrics", rubrics},
                     {"against", comparison.against},
                     {"diagnostics", DiagnosticsToJson(diagnostics)}};
    if (!comparison.not_compared.empty()) out["not_compared"] = comparison.not_compared;
    PrintJson(out, false);
  } else {
    for (const auto& d : diagnostics) {
      if (!d.acknowledged) std::printf("%s\n", d.ToString().c_str());
    }
    std::string allowed = tally.allowed > 0 ? ", " + std::to_string(tally.allowed) + " allowed" : "";
    std::string note =
        comparison.not_compared.empty() ? "" : " (schemas not compared: " + comparison.not_compared + ")";
    std::printf("%zu skill(s) and %zu rubric(s) loaded; %zu error(s), %zu warning(s)%s%s%s\n", skills, rubrics,
                tally.errors, tally.warnings, allowed.c_str(), strict_fails ? " (--strict: warnings fail)" : "",
                note.c_str());
  }
  return tally.errors > 0 || strict_fails ? kUsageStatus : 0;
}

int List(const CommonOptions& common, bool as_json) {
  auto config = ResolveConfig(common);
  if (!config) {
    for (const auto& d : config.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return kUsageStatus;
  }
  auto loaded = LoadRegistry(common, std::move(*config));
  LogDiagnostics(loaded.diagnostics);
  const int status = HasErrors(loaded.diagnostics) ? kUsageStatus : 0;
  json::array items;
  for (const auto& skill : loaded.registry->skills()) items.push_back(SkillSummaryJson(*skill));
  if (as_json) {
    // A broken tree: the skills that loaded, and why the others did not.
    if (status != 0) {
      PrintJson(json::object{{"skills", std::move(items)}, {"diagnostics", DiagnosticsToJson(loaded.diagnostics)}},
                false);
    } else {
      PrintJson(items, false);
    }
    return status;
  }
  std::printf("%-24s %-20s %-28s %s\n", "ID", "TYPE", "MODEL / HANDLER", "DESCRIPTION");
  for (const auto& skill : loaded.registry->skills()) {
    std::string runs_on = skill->model.empty() ? skill->handler : skill->model + " (" + skill->provider + ")";
    std::printf("%-24s %-20s %-28s %s\n", skill->id.c_str(),
                std::string(TemplateTypeName(skill->template_type)).c_str(), runs_on.c_str(),
                skill->description.c_str());
  }
  return status;
}

void AddCommonOptions(CLI::App& app, CommonOptions& common) {
  app.add_option("--skills", common.skills_dir, "Folder of skill folders (default ./skills)");
  app.add_option("--rubrics", common.rubrics_dir, "Folder of rubric YAML files (default ./rubrics)");
  app.add_option("--config", common.config_file,
                 "Config file (default ./skillrunner.yaml, else the built-in simulated-only config)");
  app.add_option("--provider", common.provider,
                 "Route every model to this provider, e.g. simulated (env SKILLRUNNER_PROVIDER)");
  app.add_option("--log-level", common.log_level, "trace|debug|info|warn|error|critical|off");
  app.add_option("--log-format", common.log_format, "text|json");
  app.add_option("--state-dir", common.state_dir,
                 "Where rollout state is kept (default $STATE_DIRECTORY, else $XDG_STATE_HOME/skillrunner, else "
                 "~/.local/state/skillrunner)");
  app.add_option("--handler-concurrency", common.handler_concurrency,
                 "Child processes (exec handlers, validators and checks) run at once; the rest wait for a place "
                 "(default the config's handler_concurrency, else the usable cores)")
      ->check(CLI::Range(1, 1024));
}

}  // namespace

// `run SKILL --input ...` and its options.
CLI::App* AddRunCommand(CLI::App& app, RunOptions& run) {
  auto* run_cmd = app.add_subcommand("run", "Invoke one skill and print its result as JSON");
  run_cmd->add_option("skill", run.skill, "Skill id")->required();
  auto* input = run_cmd->add_option("--input", run.input, "The input as JSON text");
  auto* input_file = run_cmd->add_option("--input-file", run.input_file, "Read the input from a file (- for stdin)");
  input->excludes(input_file);
  run_cmd->add_flag("--pretty", run.pretty, "Indent the JSON output");
  run_cmd->add_option("--timeout-ms", run.timeout_ms, "Override the skill's timeout_ms")->check(CLI::PositiveNumber);
  run_cmd->add_option("--seed", run.seed, "Seed for the simulated provider")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--session", run.session,
                      "Session id: earlier validation errors of this skill in the session are fed forward");
  run_cmd
      ->add_option("--version", run.version,
                   "Run this version of the skill: its stable version or its rollout's candidate (default: stable)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_flag("--stream", run.stream,
                    "Print skills.partial and skills.reset events as JSON lines while the answer is generated");
  run_cmd
      ->add_option("--partial-interval-ms", run.partial_interval_ms,
                   "With --stream: at most one skills.partial per this many ms (default 25; 0: every one)")
      ->check(CLI::Range(std::int64_t{0}, kMaxPartialInterval.count()));
  run_cmd->add_flag("--show-request", run.show_request,
                    "Each LLM attempt carries the request it made (messages, response format)");
  run_cmd->add_option("--traceparent", run.traceparent, "W3C traceparent: the invocation's span is a child of this one")
      ->check([](const std::string& text) {
        std::string why;
        return ParseTraceparent(text, &why) ? std::string() : "not a W3C traceparent: " + why;
      });
  run_cmd->add_flag("--no-tree-cache", run.no_tree_cache,
                    "Load and check the whole tree, neither using nor writing its cached index "
                    "(also SKILLRUNNER_NO_TREE_CACHE=1)");
  return run_cmd;
}

CLI::App* AddValidateCommand(CLI::App& app, ValidateOptions& validate) {
  auto* validate_cmd = app.add_subcommand("validate", "Check every skill, rubric and the config; exit 2 on any error");
  validate_cmd->add_flag("--json", validate.as_json, "Print the diagnostics as JSON");
  validate_cmd->add_flag("--strict", validate.strict, "Warnings fail too (exit 2), except the allowed ones");
  validate_cmd
      ->add_option("--allow", validate.allow,
                   "Acknowledge the warnings of this code (repeatable; see `skillrunner schema`, Lint codes)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  validate_cmd->add_option("--against", validate.against,
                           "Compare each skill's schemas with the skill at this git ref: a change that breaks "
                           "callers needs a higher version (default HEAD; none: no comparison)");
  validate_cmd->add_option("--suite", validate.suites,
                           "Also check the eval suites named and every dataset they use (each skill's cases.jsonl "
                           "is always checked)");
  return validate_cmd;
}

// `providers check`; returns the check subcommand.
CLI::App* AddProvidersCheckCommand(CLI::App& app, ProvidersCheckOptions& check) {
  auto* providers_cmd = app.add_subcommand("providers", "Work with the configured providers");
  providers_cmd->require_subcommand(1);
  auto* check_cmd = providers_cmd->add_subcommand(
      "check", "Send one tiny request through each provider (or NAME) and print latency, model and usage");
  check_cmd->add_option("name", check.name, "Provider name from the config");
  check_cmd->add_option("--model", check.model,
                        "Model to ask (default: the first in the models table on that provider)");
  check_cmd->add_flag("--json", check.as_json, "One JSON object per provider");
  return check_cmd;
}

namespace {

// Parses the command line; the exit status when that is all there is to do
// (--help, --version, a usage error).
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsageStatus;
  }
  return std::nullopt;
}

// The commands that set `chosen` when parsed.
void AddChosenCommands(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen) {
  AddServeCommands(app, common, chosen);
  AddMcpCommand(app, common, chosen);
  AddCodegenCommand(app, common, chosen);
  AddRolloutCommands(app, common, chosen);
  AddViewCommand(app, common, chosen);
  AddImportCommand(app, chosen);
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{
      "skillrunner: runs LLM skills registered as YAML and returns JSON that matches "
      "their schemas, or a typed error that shows every attempt."};
  app.set_version_flag("--version", std::string("skillrunner ") + SKILLRUNNER_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  CommonOptions common;
  AddCommonOptions(app, common);

  RunOptions run;
  auto* run_cmd = AddRunCommand(app, run);

  ValidateOptions validate;
  auto* validate_cmd = AddValidateCommand(app, validate);

  bool list_json = false;
  auto* list_cmd = app.add_subcommand("list", "List the skills that load");
  list_cmd->add_flag("--json", list_json, "Print the list as JSON");
  bool schema_markdown = false;
  auto* schema_cmd = app.add_subcommand(
      "schema", "Print the reference of every key of skill.yaml, rubrics, eval suites and skillrunner.yaml");
  schema_cmd->add_flag("--markdown", schema_markdown, "As Markdown (the only format so far; also the default)");

  ProvidersCheckOptions check;
  auto* check_cmd = AddProvidersCheckCommand(app, check);

  std::function<int()> chosen;
  AddChosenCommands(app, common, chosen);

  EvalCommand eval_command(app);

  if (auto status = Parse(app, argc, argv)) return *status;
  if (auto logging = ConfigureLogging(common.log_level, common.log_format); !logging) {
    std::fprintf(stderr, "skillrunner: %s\n", logging.error().message.c_str());
    return kUsageStatus;
  }
  if (run.input.empty() && run.input_file.empty() && run_cmd->parsed()) {
    std::fprintf(stderr, "skillrunner run: give the input with --input JSON or --input-file FILE\n");
    return kUsageStatus;
  }
  try {
    if (run_cmd->parsed()) return Run(common, run);
    if (validate_cmd->parsed()) return Validate(common, validate);
    if (schema_cmd->parsed()) {
      std::fputs(KeyReferenceMarkdown().c_str(), stdout);
      return 0;
    }
    if (list_cmd->parsed()) return List(common, list_json);
    if (check_cmd->parsed()) return ProvidersCheck(common, check);
    if (eval_command.parsed()) return eval_command.Run(common);
    if (chosen) return chosen();
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return 70;
  }
  return kUsageStatus;
}

}  // namespace skillrunner::cli
