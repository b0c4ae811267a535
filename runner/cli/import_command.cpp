#include "runner/cli/import_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "runner/importer/openai_evals.h"
#include "runner/importer/promptfoo.h"

namespace skillrunner::cli {
namespace {

struct ImportOptions {
  std::string source;  // CONFIG or EVAL.json
  std::string data;    // openai-evals --data
  std::string out;
  bool force = false;
  bool strict = false;
};

int Write(const char* what, Result<importer::ImportedTree> tree, const ImportOptions& options) {
  if (!tree) {
    std::fprintf(stderr, "skillrunner import %s: %s\n", what, tree.error().message.c_str());
    return 2;
  }
  const std::filesystem::path dir =
      options.out.empty() ? std::filesystem::path(tree->name) : std::filesystem::path(options.out);
  if (auto written = importer::WriteTree(*tree, dir, options.force); !written) {
    std::fprintf(stderr, "skillrunner import %s: %s\n", what, written.error().message.c_str());
    return 2;
  }
  std::size_t cases = 0;
  for (const auto& [skill, list] : tree->cases) cases += list.size();
  std::fprintf(stderr, "import: wrote %s: %zu skill(s), %zu case(s), %zu rubric(s); %zu not carried over (%s)\n",
               dir.string().c_str(), tree->skills.size(), cases, tree->rubrics.size(), tree->not_carried.size(),
               (dir / "import-report.md").string().c_str());
  std::fprintf(stderr, "import: run it: cd %s && skillrunner --provider simulated eval evals/%s.yaml --out out/%s\n",
               dir.string().c_str(), tree->name.c_str(), tree->name.c_str());
  return options.strict && !tree->not_carried.empty() ? 1 : 0;
}

void CommonFlags(CLI::App* command, ImportOptions& options) {
  command->add_option("--out", options.out, "The folder to write the tree into (default ./NAME)");
  command->add_flag("--force", options.force, "Write into an --out folder that is not empty");
  command->add_flag("--strict", options.strict, "Exit 1 when anything was not carried over");
}

}  // namespace

void AddImportCommand(CLI::App& app, std::function<int()>& chosen) {
  auto* import = app.add_subcommand("import", "Make a skillrunner tree from a promptfoo config or an OpenAI eval");
  import->require_subcommand(1);
  auto pf = std::make_shared<ImportOptions>();
  auto* promptfoo = import->add_subcommand("promptfoo", "Import a promptfoo config (promptfooconfig.yaml)");
  promptfoo->add_option("CONFIG", pf->source, "The promptfoo config")->required();
  CommonFlags(promptfoo, *pf);
  promptfoo->callback(
      [&chosen, pf] { chosen = [pf] { return Write("promptfoo", importer::ImportPromptfoo(pf->source), *pf); }; });
  auto oe = std::make_shared<ImportOptions>();
  auto* evals = import->add_subcommand("openai-evals", "Import an OpenAI eval object (as the Evals API returns it)");
  evals->add_option("EVAL", oe->source, "The eval object, JSON")->required();
  evals->add_option("--data", oe->data, "Its items, JSONL of {\"item\": {...}} (the eval run's data source)");
  CommonFlags(evals, *oe);
  evals->callback([&chosen, oe] {
    chosen = [oe] { return Write("openai-evals", importer::ImportOpenAiEval(oe->source, oe->data), *oe); };
  });
}

}  // namespace skillrunner::cli
