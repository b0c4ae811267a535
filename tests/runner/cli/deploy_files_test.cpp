// The recipes under deploy/ against the real program (design.md §10.3): every
// YAML file parses; every `skillrunner ...` they run (container args, shell
// scripts of Jobs and CI jobs, the Dockerfile's ENTRYPOINT/CMD/HEALTHCHECK/RUN)
// names a real subcommand and only flags its `--help` lists; the tree the
// Kubernetes ConfigMap mounts passes `skillrunner validate` and its eval suite
// loads and runs (simulated provider); the shard count agrees everywhere.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <boost/json/parse.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace fs = std::filesystem;
using test_support::Skillrunner;

const fs::path kRoot = SKILLRUNNER_SOURCE_DIR;

std::string Read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Rel(const fs::path& file) { return fs::relative(file, kRoot).string(); }

std::vector<fs::path> DeployFiles(const std::set<std::string>& extensions) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "deploy")) {
    if (entry.is_regular_file() && extensions.contains(entry.path().extension().string()))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One command's `--help`: its flags (true: takes a value) and subcommands.
struct Help {
  std::map<std::string, bool> flags;
  std::set<std::string> subcommands;
};

Help HelpOf(const std::string& command) {
  static std::map<std::string, Help> cache;
  if (auto it = cache.find(command); it != cache.end()) return it->second;
  testing::TempTree dir;
  auto ran = Skillrunner(dir.root(), command + " --help", "2>&1");
  EXPECT_EQ(ran.status, 0) << "skillrunner " << command << " --help:\n" << ran.out;
  Help help;
  static const std::regex kFlag(R"(^  (?:-\w,)?(--[\w-]+)( \S)?)");
  static const std::regex kSubcommand(R"(^  ([a-z][\w-]*)\s)");
  std::istringstream lines(ran.out);
  bool in_subcommands = false;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ') in_subcommands = line == "Subcommands:";
    std::smatch m;
    if (std::regex_search(line, m, kFlag)) help.flags[m[1]] = m[2].matched;
    if (in_subcommands && std::regex_search(line, m, kSubcommand)) help.subcommands.insert(m[1]);
  }
  return cache[command] = help;
}

// An invocation found in a file: the words after `skillrunner`.
struct Invocation {
  std::string file;
  std::vector<std::string> words;
  std::string Text() const {
    std::string text = "skillrunner";
    for (const auto& w : words) text += " " + w;
    return text;
  }
};

// Checks the words against the program; returns the subcommand path ("eval
// merge", "" for none) and adds a failure naming the file for each mistake.
std::string CheckInvocation(const Invocation& call) {
  const Help root = HelpOf("");
  std::string path;
  Help help = root;
  bool value_next = false;
  for (std::string word : call.words) {
    if (value_next) {
      value_next = false;
      continue;
    }
    if (word.starts_with("--")) {
      const std::string flag = word.substr(0, word.find('='));
      auto own = help.flags.find(flag);
      auto global = root.flags.find(flag);
      if (own == help.flags.end() && global == root.flags.end()) {
        ADD_FAILURE() << call.file << ": `" << call.Text() << "`: `skillrunner " << path << " --help` has no " << flag;
        continue;
      }
      const bool takes_value = own != help.flags.end() ? own->second : global->second;
      value_next = takes_value && word.find('=') == std::string::npos;
    } else if (help.subcommands.contains(word)) {
      path += (path.empty() ? "" : " ") + word;
      help = HelpOf(path);
    } else if (path.empty()) {
      ADD_FAILURE() << call.file << ": `" << call.Text() << "`: no subcommand " << word;
      return "?";
    } else {
      help.subcommands.clear();  // a positional: no subcommand after it
    }
  }
  return path;
}

// `skillrunner ...` commands in shell text (a CI script, `sh -c`, a RUN line):
// continuations joined, comments dropped, words up to a shell operator.
void FindInShell(const std::string& file, std::string text, std::vector<Invocation>& found) {
  text = std::regex_replace(text, std::regex(R"(\\\n)"), " ");
  std::istringstream lines(text);
  static const std::set<std::string> kStops = {"||", "&&", ";", "|", "&", ")"};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w && !w.starts_with('#');) tokens.push_back(w);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const bool command_position = i == 0 || kStops.contains(tokens[i - 1]) || tokens[i - 1] == "exec";
      if (tokens[i] != "skillrunner" || !command_position) continue;
      Invocation call{file, {}};
      for (std::size_t j = i + 1; j < tokens.size() && !kStops.contains(tokens[j]) && !tokens[j].starts_with('>');
           ++j) {
        std::string w = tokens[j];
        if (w.size() >= 2 && (w.front() == '"' || w.front() == '\'') && w.back() == w.front())
          w = w.substr(1, w.size() - 2);
        call.words.push_back(w);
      }
      found.push_back(call);
    }
  }
}

std::vector<std::string> Words(const YAML::Node& sequence) {
  std::vector<std::string> words;
  for (const auto& item : sequence) words.push_back(item.as<std::string>());
  return words;
}

// Every invocation in a YAML node: the args of a container of the skillrunner
// image (its ENTRYPOINT is skillrunner), `command: [skillrunner, ...]`, and
// shell text anywhere else (ConfigMap data is configuration, not commands).
void FindInYaml(const std::string& file, const YAML::Node& node, std::vector<Invocation>& found) {
  if (node.IsScalar()) {
    FindInShell(file, node.as<std::string>(), found);
  } else if (node.IsSequence()) {
    if (node.size() > 0 && node[0].IsScalar() && node[0].as<std::string>() == "skillrunner") {
      auto words = Words(node);
      found.push_back({file, {words.begin() + 1, words.end()}});
      return;
    }
    for (const auto& item : node) FindInYaml(file, item, found);
  } else if (node.IsMap()) {
    if (node["kind"] && node["kind"].as<std::string>() == "ConfigMap") return;
    const bool ours = node["image"] && node["image"].as<std::string>().starts_with("skillrunner");
    if (ours && !node["command"] && node["args"]) found.push_back({file, Words(node["args"])});
    for (const auto& entry : node) FindInYaml(file, entry.second, found);
  }
}

// The Dockerfile: ENTRYPOINT + CMD, HEALTHCHECK's CMD and RUN lines.
std::vector<Invocation> FindInDockerfile(const fs::path& path) {
  const std::string file = Rel(path);
  std::string text = std::regex_replace(Read(path), std::regex(R"(\\\n)"), " ");
  std::vector<Invocation> found;
  std::vector<std::string> entrypoint, cmd;
  auto words_of = [](const std::string& json_array) {
    std::vector<std::string> words;
    const boost::json::value parsed = boost::json::parse(json_array);
    for (const auto& w : parsed.as_array()) words.emplace_back(w.as_string());
    return words;
  };
  std::istringstream lines(text);
  static const std::regex kInstruction(R"(^(ENTRYPOINT|CMD|HEALTHCHECK|RUN)\s+(.*)$)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kInstruction)) continue;
    const std::string body = m[2];
    if (m[1] == "RUN") FindInShell(file, body, found);
    if (m[1] == "ENTRYPOINT") entrypoint = words_of(body);
    if (m[1] == "CMD") cmd = words_of(body);
    if (m[1] == "HEALTHCHECK") {
      auto words = words_of(body.substr(body.find('[')));
      EXPECT_EQ(words.at(0), "skillrunner") << file << ": HEALTHCHECK";
      found.push_back({file, {words.begin() + 1, words.end()}});
    }
  }
  EXPECT_EQ(entrypoint, std::vector<std::string>{"skillrunner"}) << file;
  found.push_back({file, cmd});
  return found;
}

std::vector<YAML::Node> LoadAll(const fs::path& path) {
  try {
    return YAML::LoadAllFromFile(path.string());
  } catch (const YAML::Exception& e) {
    ADD_FAILURE() << Rel(path) << ": " << e.what();
    return {};
  }
}

TEST(DeployFilesTest, EveryYamlFileParses) {
  auto files = DeployFiles({".yaml", ".yml"});
  EXPECT_GE(files.size(), 10u);  // kubernetes/*.yaml and ci/*.yml
  for (const auto& file : files) {
    auto documents = LoadAll(file);
    EXPECT_FALSE(documents.empty()) << Rel(file);
    for (const auto& document : documents) EXPECT_TRUE(document.IsMap()) << Rel(file) << ": a document is not a map";
  }
}

TEST(DeployFilesTest, EverySkillrunnerCommandUsesRealSubcommandsAndFlags) {
  std::vector<Invocation> found;
  for (const auto& file : DeployFiles({".yaml", ".yml"})) {
    for (const auto& document : LoadAll(file)) FindInYaml(Rel(file), document, found);
  }
  auto docker = FindInDockerfile(kRoot / "deploy/docker/Dockerfile");
  found.insert(found.end(), docker.begin(), docker.end());
  std::set<std::string> seen;  // "file: subcommand"
  for (const auto& call : found) seen.insert(call.file + ": " + CheckInvocation(call));
  // What each recipe must run, so that a scanner that found nothing fails.
  for (const std::string expected :
       {"deploy/docker/Dockerfile: serve", "deploy/docker/Dockerfile: probe",
        "deploy/kubernetes/deployment.yaml: serve", "deploy/kubernetes/eval-cronjob.yaml: eval",
        "deploy/kubernetes/eval-cronjob.yaml: eval merge", "deploy/ci/github-actions.yml: eval",
        "deploy/ci/github-actions.yml: eval merge", "deploy/ci/gitlab-ci.yml: eval",
        "deploy/ci/gitlab-ci.yml: eval merge"}) {
    EXPECT_TRUE(seen.contains(expected)) << "no `skillrunner` command found for " << expected;
  }
}

// The ConfigMap volumes of every manifest: the file, and the items' key -> path.
struct TreeVolume {
  std::string file;
  std::map<std::string, std::string> items;
};

void FindTreeVolumes(const std::string& file, const YAML::Node& node, const std::string& name,
                     std::vector<TreeVolume>& found) {
  if (node.IsMap() && node["configMap"] && node["configMap"]["name"].as<std::string>() == name) {
    TreeVolume volume{file, {}};
    for (const auto& item : node["configMap"]["items"]) {
      volume.items[item["key"].as<std::string>()] = item["path"].as<std::string>();
    }
    found.push_back(volume);
    return;
  }
  if (node.IsMap() || node.IsSequence()) {
    for (const auto& entry : node) FindTreeVolumes(file, node.IsMap() ? entry.second : entry, name, found);
  }
}

TEST(DeployFilesTest, TheSkillTreeAsThePodsMountItValidatesAndRunsItsSuite) {
  const YAML::Node config_map = YAML::LoadFile((kRoot / "deploy/kubernetes/skill-tree.yaml").string());
  ASSERT_EQ(config_map["kind"].as<std::string>(), "ConfigMap");
  const std::string name = config_map["metadata"]["name"].as<std::string>();
  std::vector<TreeVolume> volumes;
  for (const auto& file : DeployFiles({".yaml"})) {
    for (const auto& document : LoadAll(file)) FindTreeVolumes(Rel(file), document, name, volumes);
  }
  ASSERT_EQ(volumes.size(), 3u);  // serve, the shards, the merge
  std::set<std::string> keys;
  for (const auto& entry : config_map["data"]) keys.insert(entry.first.as<std::string>());
  for (const auto& volume : volumes) {
    std::set<std::string> mapped;
    for (const auto& [key, path] : volume.items) mapped.insert(key);
    for (const auto& key : keys) EXPECT_TRUE(mapped.contains(key)) << volume.file << ": no items entry mounts " << key;
    for (const auto& key : mapped)
      EXPECT_TRUE(keys.contains(key)) << volume.file << ": items name " << key << ", which " << name << " lacks";
  }
  testing::TempTree tree;
  for (const auto& [key, path] : volumes.front().items) {
    tree.Write(path, config_map["data"][key].as<std::string>());
  }
  auto validated = Skillrunner(tree.root(), "validate --strict", "2>&1");
  EXPECT_EQ(validated.status, 0) << validated.out;
  // The suite loads against that tree and its dataset runs (simulated, offline;
  // Redis unreachable here: the run goes on with its local share).
  auto ran = Skillrunner(tree.root(), "--provider simulated eval evals/nightly.yaml --out out/n", "2>&1");
  // The simulated provider's answers are seeded: the suite's expected-match
  // gate breaches the same way every run, and the eval says so with exit 1.
  EXPECT_EQ(ran.status, 1) << ran.out;
  EXPECT_NE(ran.out.find("breach: triage_ticket: expected-match rate 0.500 is below the minimum 0.900"),
            std::string::npos)
      << ran.out;
  ASSERT_TRUE(fs::exists(tree.Path("out/n/summary.json"))) << ran.out;
  const auto summary = boost::json::parse(Read(tree.Path("out/n/summary.json")));
  EXPECT_EQ(summary.at("skills").at("triage_ticket").at("cases"), 6);
}

int IntOf(const YAML::Node& node) { return node.as<int>(); }

std::string EnvOf(const YAML::Node& container, const std::string& name) {
  for (const auto& var : container["env"]) {
    if (var["name"].as<std::string>() == name) return var["value"].as<std::string>();
  }
  return "(unset)";
}

TEST(DeployFilesTest, TheShardCountAgreesWhereverItIsWritten) {
  auto documents = LoadAll(kRoot / "deploy/kubernetes/eval-cronjob.yaml");
  std::map<std::string, YAML::Node> cron_jobs;
  for (const auto& d : documents) {
    if (d["kind"].as<std::string>() == "CronJob") cron_jobs[d["metadata"]["name"].as<std::string>()] = d;
  }
  ASSERT_TRUE(cron_jobs.contains("skillrunner-eval") && cron_jobs.contains("skillrunner-eval-merge"));
  const YAML::Node shards = cron_jobs["skillrunner-eval"]["spec"]["jobTemplate"]["spec"];
  const YAML::Node merge = cron_jobs["skillrunner-eval-merge"]["spec"]["jobTemplate"]["spec"];
  EXPECT_EQ(shards["completionMode"].as<std::string>(), "Indexed");
  const int n = IntOf(shards["completions"]);
  EXPECT_EQ(IntOf(shards["parallelism"]), n);
  EXPECT_EQ(EnvOf(shards["template"]["spec"]["containers"][0], "JOB_COMPLETIONS"), std::to_string(n));
  EXPECT_EQ(EnvOf(merge["template"]["spec"]["containers"][0], "SHARDS"), std::to_string(n));
  EXPECT_EQ(cron_jobs["skillrunner-eval"]["spec"]["schedule"].as<std::string>(),
            cron_jobs["skillrunner-eval-merge"]["spec"]["schedule"].as<std::string>());
  const YAML::Node github = YAML::LoadFile((kRoot / "deploy/ci/github-actions.yml").string());
  const int github_shards = IntOf(github["env"]["SHARDS"]);
  ASSERT_EQ(github["jobs"]["shard"]["strategy"]["matrix"]["shard"].size(), static_cast<std::size_t>(github_shards));
  for (int i = 0; i < github_shards; ++i)
    EXPECT_EQ(IntOf(github["jobs"]["shard"]["strategy"]["matrix"]["shard"][i]), i);
}

}  // namespace
}  // namespace skillrunner
