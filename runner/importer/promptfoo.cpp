#include "runner/importer/promptfoo.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "runner/importer/import_parts.h"

namespace skillrunner::importer {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

struct Prompt {
  std::string id;
  std::string system;
  std::string user;
  std::string where;
};

struct Test {
  std::string description;
  json::object vars;
  json::array asserts;
  std::size_t default_asserts = 0;  // the first ones came from defaultTest
  std::string where;
};

// What a prompt's skill is being built from: where its text checks point, its criteria.
struct SkillBuild {
  std::string pointer = "/answer";  // "" when an is-json schema is the output
  json::object output_schema = AnswerSchema();
  std::vector<std::string> criteria;  // the rubric's criteria, in order of first use
  std::vector<std::string> criterion_ids;
};

std::string RefPath(std::string_view ref) { return std::string(ref.substr(7)); }  // after "file://"

bool IsRef(const json::value& v) { return v.is_string() && v.as_string().starts_with("file://"); }

// A chat prompt ([{role, content}, ...]) as system and user text; the rest of the turns reported.
void ChatPrompt(const json::array& turns, Prompt& prompt, ImportedTree& tree) {
  for (std::size_t i = 0; i < turns.size(); ++i) {
    const json::object* turn = turns[i].if_object();
    const json::value* role = turn ? turn->if_contains("role") : nullptr;
    const json::value* content = turn ? turn->if_contains("content") : nullptr;
    if (!role || !content || !content->is_string()) {
      tree.Report("chat turn without text", prompt.where + "[" + std::to_string(i) + "]");
      continue;
    }
    std::string& into = role->as_string() == "system" ? prompt.system : prompt.user;
    if (role->as_string() != "system" && role->as_string() != "user") {
      tree.Report("chat turn of role " + std::string(role->as_string()), prompt.where + "[" + std::to_string(i) + "]",
                  "its text joined the user message");
    }
    into += (into.empty() ? "" : "\n\n") + std::string(content->as_string());
  }
}

Result<Prompt> ReadPrompt(const json::value& entry, const fs::path& base, std::size_t index, ImportedTree& tree) {
  Prompt prompt;
  prompt.where = "prompts[" + std::to_string(index) + "]";
  json::value raw = entry;
  if (const json::object* obj = entry.if_object()) {
    if (const json::value* label = obj->if_contains("label"); label && label->is_string())
      prompt.id = label->as_string();
    if (const json::value* id = obj->if_contains("id"); id && id->is_string() && prompt.id.empty()) {
      prompt.id = id->as_string();
    }
    raw = obj->contains("raw") ? obj->at("raw") : obj->contains("id") ? obj->at("id") : json::value();
  }
  if (!raw.is_string()) return Fail(ErrorCode::kConfigInvalid, prompt.where + ": a prompt must be text or file://");
  std::string text(raw.as_string());
  if (IsRef(raw)) {
    const fs::path file = base / RefPath(text);
    if (prompt.id.empty()) prompt.id = file.stem().string();
    auto read = ReadText(file);
    if (!read) return std::unexpected(std::move(read.error()));
    text = *read;
    if (file.extension() == ".json") {
      boost::system::error_code ec;
      json::value chat = json::parse(text, ec);
      if (!ec && chat.is_array()) {
        ChatPrompt(chat.as_array(), prompt, tree);
        return prompt;
      }
    }
  }
  if (prompt.id.empty()) prompt.id = text.substr(0, 40);  // an inline prompt is named by its first words
  prompt.user = text;
  return prompt;
}

// One test's vars, asserts and description, defaultTest's merged under it.
Test MergeTest(const json::object& test, const json::object& defaults, std::string where) {
  Test out;
  out.where = std::move(where);
  if (const json::value* d = defaults.if_contains("vars"); d && d->is_object()) out.vars = d->as_object();
  if (const json::value* v = test.if_contains("vars"); v && v->is_object()) {
    for (const auto& [name, value] : v->as_object()) out.vars[name] = value;
  }
  if (const json::value* d = defaults.if_contains("assert"); d && d->is_array()) out.asserts = d->as_array();
  out.default_asserts = out.asserts.size();
  if (const json::value* a = test.if_contains("assert"); a && a->is_array()) {
    for (const auto& item : a->as_array()) out.asserts.push_back(item);
  }
  if (const json::value* d = test.if_contains("description"); d && d->is_string()) out.description = d->as_string();
  return out;
}

// A CSV row: its columns are vars, but __expected (and __expected1...) are
// assertions in promptfoo's shorthand ("contains: x", "llm-rubric: y", or a
// value it must equal) and __description names the case.
json::object CsvTest(const json::object& row) {
  json::object vars, test;
  json::array asserts;
  for (const auto& [column, value] : row) {
    const std::string name(column);
    const std::string text = value.is_string() ? std::string(value.as_string()) : json::serialize(value);
    if (name.starts_with("__expected")) {
      if (text.empty()) continue;
      // "TYPE: VALUE" when what comes before the first colon is one word; else the value to equal.
      const std::size_t colon = text.find(':');
      const std::string type = colon == std::string::npos ? "" : text.substr(0, colon);
      if (type.empty() || type.find(' ') != std::string::npos) {
        asserts.push_back(json::object{{"type", "equals"}, {"value", text}});
        continue;
      }
      std::string rest = text.substr(colon + 1);
      rest.erase(0, rest.find_first_not_of(' '));
      asserts.push_back(json::object{{"type", type == "grade" ? "llm-rubric" : type}, {"value", rest}});
    } else if (name == "__description") {
      test["description"] = text;
    } else if (!name.starts_with("__")) {
      vars[name] = value;
    }
  }
  test["vars"] = std::move(vars);
  test["assert"] = std::move(asserts);
  return test;
}

Result<std::vector<Test>> ReadTests(const json::value& tests, const json::object& defaults, const fs::path& base) {
  std::vector<Test> out;
  json::array entries = tests.is_array() ? tests.as_array() : json::array{tests};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "tests[" + std::to_string(i) + "]";
    if (IsRef(entries[i])) {
      const fs::path file = base / RefPath(entries[i].as_string());
      auto rows = ReadRows(file);
      if (!rows) return std::unexpected(std::move(rows.error()));
      for (std::size_t r = 0; r < rows->size(); ++r) {
        if (!(*rows)[r].is_object()) return Fail(ErrorCode::kConfigInvalid, file.string() + ": a row is not an object");
        json::object test = file.extension() == ".csv" ? CsvTest((*rows)[r].as_object()) : (*rows)[r].as_object();
        out.push_back(MergeTest(test, defaults, file.filename().string() + "[" + std::to_string(r) + "]"));
      }
    } else if (entries[i].is_object()) {
      out.push_back(MergeTest(entries[i].as_object(), defaults, where));
    } else {
      return Fail(ErrorCode::kConfigInvalid, where + ": a test must be an object or file://");
    }
  }
  if (out.empty() && !defaults.empty()) out.push_back(MergeTest({}, defaults, "defaultTest"));
  return out;
}

// Adds `text` as a rubric criterion (once) of the skill being built.
void AddCriterion(SkillBuild& build, const std::string& text) {
  if (std::find(build.criteria.begin(), build.criteria.end(), text) != build.criteria.end()) return;
  build.criteria.push_back(text);
  build.criterion_ids.push_back("c" + std::to_string(build.criteria.size()));
}

// The check an assertion type makes, when it makes one: {op, negate}.
bool CheckOf(std::string type, std::string& op, bool& negate) {
  negate = type.starts_with("not-");
  if (negate) type = type.substr(4);
  static const std::pair<const char*, const char*> kOps[] = {{"equals", "equals"},
                                                             {"contains", "contains"},
                                                             {"icontains", "icontains"},
                                                             {"contains-any", "contains_any"},
                                                             {"contains-all", "contains_all"},
                                                             {"starts-with", "starts_with"},
                                                             {"regex", "regex"}};
  for (const auto& [from, to] : kOps) {
    if (type == from) op = to;
  }
  return !op.empty();
}

// One assertion into the case's checks or the skill's rubric; false when it has no home here.
bool Convert(const json::object& a, SkillBuild& build, json::object& c) {
  const std::string type = a.contains("type") && a.at("type").is_string() ? std::string(a.at("type").as_string()) : "";
  const json::value value = a.contains("value") ? a.at("value") : json::value();
  std::string op;
  bool negate = false;
  json::array& checks = c["checks"].is_array() ? c["checks"].as_array() : c["checks"].emplace_array();
  if (CheckOf(type, op, negate)) {
    json::value v = value;
    if ((op == "contains_any" || op == "contains_all") && v.is_string()) {
      json::array parts;
      for (std::size_t s = 0, e; s <= v.as_string().size(); s = e + 1) {
        e = std::string_view(v.as_string()).find(',', s);
        if (e == std::string::npos) e = v.as_string().size();
        parts.push_back(json::string(std::string_view(v.as_string()).substr(s, e - s)));
      }
      v = std::move(parts);
    }
    if (op == "equals" && build.pointer.empty() && v.is_string()) {
      boost::system::error_code ec;
      json::value parsed = json::parse(v.as_string(), ec);  // a JSON answer equals the JSON the text spells
      if (!ec) v = std::move(parsed);
    }
    json::object check{{"pointer", build.pointer}, {"op", op}, {"value", std::move(v)}};
    if (negate) check["negate"] = true;
    checks.push_back(std::move(check));
    return true;
  }
  const double threshold = a.contains("threshold") ? a.at("threshold").to_number<double>() : 0;
  if (type == "cost" || type == "latency") {
    if (!a.contains("threshold")) return false;
    checks.push_back(json::object{{"pointer", type == "cost" ? "/metrics/cost_usd" : "/metrics/duration_ms"},
                                  {"op", "lte"},
                                  {"value", threshold}});
    return true;
  }
  if (type == "is-json") return true;  // every output is JSON; a schema was taken as the output schema
  if (!value.is_string()) return false;
  const std::string text(value.as_string());
  if (type == "llm-rubric" || type == "g-eval") {
    AddCriterion(build, text);
  } else if (type == "model-graded-closedqa") {
    AddCriterion(build, "The answer meets this requirement: " + text);
  } else if (type == "factuality") {
    AddCriterion(build, "The answer is consistent with the reference answer.");
    c["reference"] = text;
  } else {
    return false;
  }
  return true;
}

// The output schema of a prompt: the first is-json assertion's schema, when its root is an object.
void TakeOutputSchema(const std::vector<Test>& tests, SkillBuild& build, ImportedTree& tree) {
  for (const Test& t : tests) {
    for (std::size_t i = 0; i < t.asserts.size(); ++i) {
      const json::object* a = t.asserts[i].if_object();
      if (!a || !a->contains("type") || a->at("type") != "is-json" || !a->contains("value")) continue;
      const json::value& schema = a->at("value");
      if (schema.is_object() && schema.as_object().contains("type") && schema.as_object().at("type") == "object") {
        build.output_schema = schema.as_object();
        build.output_schema.erase("$schema");
        build.pointer = "";
        return;
      }
      tree.Report("is-json schema whose root is not an object", t.where + ".assert[" + std::to_string(i) + "]",
                  "the output is {\"answer\": string}");
    }
  }
}

json::object MakeCase(const Test& test, std::size_t index, const std::string& skill, SkillBuild& build,
                      std::vector<std::string>& ids, ImportedTree& tree) {
  json::object c{
      {"id", UniqueId(test.description.empty() ? "case_" + std::to_string(index + 1) : MakeId(test.description), ids)},
      {"input", test.vars}};
  for (const auto& [name, value] : test.vars) {
    if (IsRef(value)) tree.Report("var from file://", test.where + ".vars." + std::string(name), "kept as text");
    if (value.is_array()) {
      tree.Report("var with several values", test.where + ".vars." + std::string(name),
                  "one case with the array as its value (promptfoo runs a test per value)");
    }
  }
  for (std::size_t i = 0; i < test.asserts.size(); ++i) {
    const std::string where = test.where + ".assert[" + std::to_string(i) + "] (skill " + skill + ")";
    const json::object* a = test.asserts[i].if_object();
    const std::string type =
        a && a->contains("type") && a->at("type").is_string() ? std::string(a->at("type").as_string()) : "?";
    if (a && Convert(*a, build, c)) {
      ++tree.carried_assertions;
      if (a->contains("weight")) tree.Report("assertion weight", where, "every check weighs the same");
      const bool judged = type == "llm-rubric" || type == "g-eval" || type == "model-graded-closedqa";
      if (judged && i >= test.default_asserts) {
        tree.Report("rubric assertion of one test", where, "a criterion of the skill's rubric, judged on every case");
      }
    } else {
      tree.Report("assertion " + type, where);
    }
  }
  if (c.contains("checks") && c.at("checks").as_array().empty()) c.erase("checks");
  return c;
}

json::object SkillYaml(const Prompt& prompt, const std::string& id, const std::string& model, const SkillBuild& build,
                       const std::vector<json::object>& cases, ImportedTree& tree) {
  json::object text;
  if (!prompt.system.empty()) text["system"] = ConvertTemplate(prompt.system, "", tree, prompt.where + ".system");
  text["user"] = ConvertTemplate(prompt.user.empty() ? "{{input}}" : prompt.user, "", tree, prompt.where);
  std::vector<json::object> inputs;
  for (const auto& c : cases) inputs.push_back(c.at("input").as_object());
  return json::object{{"id", id},
                      {"template_type", "LLM_JSON_GENERATION"},
                      {"model", model},
                      {"prompt", std::move(text)},
                      {"input_schema", InferInputSchema(inputs)},
                      {"output_schema", build.output_schema}};
}

// The models table from `providers`; the first is every skill's model.
std::string ReadProviders(const json::object& config, ImportedTree& tree) {
  const json::value* providers = config.if_contains("providers");
  json::array list = !providers              ? json::array{}
                     : providers->is_array() ? providers->as_array()
                                             : json::array{*providers};
  std::string first;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "providers[" + std::to_string(i) + "]";
    std::string id, base_url;
    if (list[i].is_string()) id = list[i].as_string();
    if (const json::object* obj = list[i].if_object()) {
      if (obj->contains("id") && obj->at("id").is_string()) id = obj->at("id").as_string();
      const json::value* cfg = obj->if_contains("config");
      if (cfg && cfg->is_object() && cfg->as_object().contains("apiBaseUrl")) {
        base_url = json::value_to<std::string>(cfg->as_object().at("apiBaseUrl"));
      }
    }
    if (id.empty()) {
      tree.Report("provider without an id", where);
      continue;
    }
    std::string model = AddModel(tree, id, base_url, where);
    if (first.empty()) {
      first = model;
    } else {
      tree.Report("another provider", where,
                  "its model " + model + " is in the models table; the skills run on " + first +
                      " (a skill's model: key names the one it runs on)");
    }
  }
  if (first.empty()) first = AddModel(tree, "none", "", "providers");
  return first;
}

// The skill, cases and rubric of one prompt; its suite entry.
json::object AddSkill(const Prompt& prompt, std::size_t index, const std::string& model, const std::vector<Test>& tests,
                      std::vector<std::string>& skill_ids, ImportedTree& tree) {
  const std::string id =
      UniqueId(MakeId(prompt.id.empty() ? "prompt_" + std::to_string(index + 1) : prompt.id), skill_ids);
  SkillBuild build;
  TakeOutputSchema(tests, build, tree);
  std::vector<std::string> case_ids;
  std::vector<json::object> cases;
  for (std::size_t t = 0; t < tests.size(); ++t) cases.push_back(MakeCase(tests[t], t, id, build, case_ids, tree));
  tree.skills[id] = SkillYaml(prompt, id, model, build, cases, tree);
  tree.cases[id] = std::move(cases);
  json::object entry{{"skill", id}};
  if (build.criteria.empty()) return entry;
  json::array criteria;
  for (std::size_t i = 0; i < build.criteria.size(); ++i) {
    criteria.push_back(
        json::object{{"id", build.criterion_ids[i]}, {"description", build.criteria[i]}, {"required", true}});
  }
  tree.rubrics[id + "_rubric"] = json::object{{"id", id + "_rubric"}, {"criteria", std::move(criteria)}};
  entry["rubric"] = id + "_rubric";
  entry["judge_model"] = model;
  return entry;
}

}  // namespace

Result<ImportedTree> ImportPromptfoo(const fs::path& config_file) {
  auto loaded = ReadYamlFile(config_file);
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  if (!loaded->is_object() || !loaded->as_object().contains("prompts")) {
    return Fail(ErrorCode::kConfigInvalid, config_file.string() + ": not a promptfoo config (it has no prompts)");
  }
  const json::object& config = loaded->as_object();
  const fs::path base = config_file.parent_path();
  ImportedTree tree;
  tree.source = "promptfoo config " + config_file.filename().string();
  const json::value* description = config.if_contains("description");
  tree.name = MakeId(description && description->is_string() ? std::string(description->as_string())
                                                             : config_file.stem().string());
  const std::string model = ReadProviders(config, tree);
  json::object defaults;
  if (const json::value* d = config.if_contains("defaultTest"); d && d->is_object()) defaults = d->as_object();
  auto tests = ReadTests(config.contains("tests") ? config.at("tests") : json::array{}, defaults, base);
  if (!tests) return std::unexpected(std::move(tests.error()));
  const json::value& prompts_value = config.at("prompts");
  json::array prompts = prompts_value.is_array() ? prompts_value.as_array() : json::array{prompts_value};
  json::array entries;
  std::vector<std::string> skill_ids;
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    auto prompt = ReadPrompt(prompts[p], base, p, tree);
    if (!prompt) return std::unexpected(std::move(prompt.error()));
    entries.push_back(AddSkill(*prompt, p, model, *tests, skill_ids, tree));
  }
  // promptfoo fails a run when any assertion fails: every check and criterion must hold.
  tree.suite = json::object{{"id", tree.name},
                            {"skills", std::move(entries)},
                            {"thresholds", json::object{{"check_pass_rate", 1.0}, {"rubric_pass_rate", 1.0}}}};
  return tree;
}

}  // namespace skillrunner::importer
