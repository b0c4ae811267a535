#include "runner/cli/codegen_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>

#include "runner/codegen/codegen.h"

namespace skillrunner::cli {

namespace {

constexpr int kUsageStatus = 2;

struct CodegenOptions {
  std::string language;
  std::string out;
};

int Codegen(const CommonOptions& common, const CodegenOptions& options) {
  auto config = ResolveConfig(common);
  if (!config) {
    for (const auto& d : config.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return kUsageStatus;
  }
  auto loaded = LoadRegistry(common, std::move(*config));
  if (HasErrors(loaded.diagnostics)) {
    for (const auto& d : loaded.diagnostics) {
      if (d.severity == Diagnostic::Severity::kError) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    }
    std::fprintf(stderr, "skillrunner codegen: the tree has errors; nothing written\n");
    return kUsageStatus;
  }
  const auto language = options.language == "python" ? codegen::Language::kPython : codegen::Language::kTypeScript;
  auto file = codegen::Generate(language, loaded.registry->skills());
  if (!file) {
    std::fprintf(stderr, "skillrunner codegen: %s\n", file.error().message.c_str());
    return kUsageStatus;
  }
  std::error_code error;
  std::filesystem::create_directories(options.out, error);
  const std::filesystem::path path = std::filesystem::path(options.out) / file->name;
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << file->text;
  stream.close();
  if (error || !stream) {
    std::fprintf(stderr, "skillrunner codegen: cannot write %s\n", path.string().c_str());
    return kUsageStatus;
  }
  std::fprintf(stderr, "skillrunner codegen: wrote %s (%zu skills)\n", path.string().c_str(),
               loaded.registry->skills().size());
  return 0;
}

}  // namespace

void AddCodegenCommand(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen) {
  auto options = std::make_shared<CodegenOptions>();
  auto* command = app.add_subcommand(
      "codegen", "Write typed client functions for the tree's skills: DIR/skillrunner_skills.py or DIR/skills.ts");
  command->add_option("language", options->language, "python or typescript")
      ->required()
      ->check(CLI::IsMember({"python", "typescript"}));
  command->add_option("--out", options->out, "Folder to write the file into (created when missing)")->required();
  command->callback([&common, &chosen, options] { chosen = [&common, options] { return Codegen(common, *options); }; });
}

}  // namespace skillrunner::cli
