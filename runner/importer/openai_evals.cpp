#include "runner/importer/openai_evals.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <regex>

#include "runner/importer/import_parts.h"

namespace skillrunner::importer {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kOutputText = "{{sample.output_text}}";

struct Build {
  std::string skill;
  std::vector<json::object> criteria;  // the rubric's
  std::vector<json::object> per_item;  // graders whose checks depend on the item: string_check, fuzzy
  std::optional<json::object> exec;    // the exec_check of the first python grader
  std::vector<json::object>* cases = nullptr;
};

std::string Str(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// A grader's "reference": a literal, or {{item.x}} read from the item.
json::value ResolveReference(const std::string& reference, const json::object& item) {
  static const std::regex kItem(R"(^\{\{\s*item\.([A-Za-z0-9_.]+)\s*\}\}$)");
  std::smatch m;
  if (!std::regex_match(reference, m, kItem)) return json::string(reference);
  std::string pointer = "/" + m[1].str();
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  boost::system::error_code ec;
  const json::value whole(item);
  const json::value* found = whole.find_pointer(pointer, ec);
  return found ? *found : json::value(nullptr);
}

// The grader's messages as one text for a criterion, its placeholders in words.
std::string GraderText(const json::value& input) {
  std::string text;
  const json::array* turns = input.if_array();
  if (!turns) return input.is_string() ? std::string(input.as_string()) : std::string();
  for (const auto& turn : *turns) {
    const json::object* t = turn.if_object();
    if (!t) continue;
    const std::string content = Str(*t, "content");
    if (!content.empty()) text += (text.empty() ? "" : "\n") + content;
  }
  static const std::regex kSample(R"(\{\{\s*sample\.output_text\s*\}\})");
  static const std::regex kItem(R"(\{\{\s*item\.([A-Za-z0-9_.]+)\s*\}\})");
  text = std::regex_replace(text, kSample, "the answer");
  return std::regex_replace(text, kItem, "the input's $1");
}

void AddCriterion(Build& build, const std::string& name, std::string description) {
  build.criteria.push_back(
      json::object{{"id", MakeId(name.empty() ? "c" + std::to_string(build.criteria.size() + 1) : name)},
                   {"description", std::move(description)},
                   {"required", true}});
}

std::string Join(const json::value* list) {
  std::string out;
  if (!list || !list->is_array()) return out;
  for (const auto& v : list->as_array()) out += (out.empty() ? "" : ", ") + json::serialize(v);
  return out;
}

std::string PythonWrapper(const std::string& source) {
  return source +
         "\n\n# Added by skillrunner import: the exec_check's call of grade(sample, item).\n"
         "if __name__ == \"__main__\":\n    import json, sys\n    _d = json.load(sys.stdin)\n"
         "    print(json.dumps(grade(_d[\"sample\"], _d[\"item\"])))\n";
}

// One testing criterion into the build; false when it has no home here.
bool Criterion(const json::object& c, const std::string& where, Build& build, ImportedTree& tree) {
  const std::string type = Str(c, "type"), name = Str(c, "name");
  if (type == "string_check" || (type == "text_similarity" && Str(c, "evaluation_metric") == "fuzzy_match")) {
    if (Str(c, "input") != kOutputText) return false;  // a check of something else than the answer
    build.per_item.push_back(c);
    return true;
  }
  if (type == "label_model") {
    AddCriterion(build, name,
                 GraderText(c.contains("input") ? c.at("input") : json::value()) + "\nLabel it one of " +
                     Join(c.if_contains("labels")) + "; it passes when the label is one of " +
                     Join(c.if_contains("passing_labels")) + ".");
    return true;
  }
  if (type == "score_model") {
    const json::value* threshold = c.if_contains("pass_threshold");
    AddCriterion(build, name,
                 GraderText(c.contains("input") ? c.at("input") : json::value()) + "\nScore it in the range " +
                     (c.contains("range") ? json::serialize(c.at("range")) : std::string("[0, 1]")) +
                     "; it passes at " + (threshold ? json::serialize(*threshold) : std::string("the top")) +
                     " or more.");
    return true;
  }
  if (type == "python") {
    if (build.exec) {
      tree.Report("another python grader", where, "a case runs one exec_check: only the first grader is kept");
      return false;
    }
    const std::string file = "graders/" + MakeId(name.empty() ? "grader" : name) + ".py";
    tree.files["skills/" + build.skill + "/" + file] = PythonWrapper(Str(c, "source"));
    json::object exec{{"argv", json::array{"python3", file}}};
    if (const json::value* t = c.if_contains("pass_threshold"); t && t->is_number()) exec["pass_threshold"] = *t;
    build.exec = std::move(exec);
    return true;
  }
  return false;
}

// The checks of one item from the item-dependent graders.
json::array ItemChecks(const Build& build, const json::object& item) {
  json::array checks;
  for (const json::object& c : build.per_item) {
    json::object check{{"pointer", "/answer"}, {"value", ResolveReference(Str(c, "reference"), item)}};
    const std::string op = Str(c, "operation");
    if (Str(c, "type") == "text_similarity") {
      check["op"] = "fuzzy";
      if (const json::value* t = c.if_contains("pass_threshold"); t && t->is_number()) check["threshold"] = *t;
    } else {
      check["op"] = op == "like" ? "contains" : op == "ilike" ? "icontains" : "equals";
      if (op == "ne") check["negate"] = true;
    }
    if (!check.at("value").is_string() && check.at("op") != "equals") check["value"] = json::serialize(check["value"]);
    checks.push_back(std::move(check));
  }
  return checks;
}

// The item schema: data_source_config.item_schema (a create request) or
// .schema.properties.item (the eval as the API returns it).
json::object ItemSchema(const json::object& eval, ImportedTree& tree) {
  const json::value* config = eval.if_contains("data_source_config");
  const json::object* cfg = config ? config->if_object() : nullptr;
  if (cfg && cfg->contains("item_schema") && cfg->at("item_schema").is_object())
    return cfg->at("item_schema").as_object();
  boost::system::error_code ec;
  const json::value whole = cfg ? json::value(*cfg) : json::value();
  const json::value* item = cfg ? whole.find_pointer("/schema/properties/item", ec) : nullptr;
  if (item && item->is_object()) return item->as_object();
  if (cfg && Str(*cfg, "type") != "custom") {
    tree.Report("data source " + Str(*cfg, "type"), "data_source_config",
                "the input schema is inferred from the items");
  }
  return {};
}

Result<std::vector<json::object>> ReadItems(const fs::path& data) {
  std::vector<json::object> items;
  if (data.empty()) return items;
  auto rows = ReadRows(data);
  if (!rows) return std::unexpected(std::move(rows.error()));
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const json::object* row = (*rows)[i].if_object();
    const json::value* item = row ? row->if_contains("item") : nullptr;
    if (!item || !item->is_object()) {
      return Fail(ErrorCode::kConfigInvalid,
                  data.string() + ":" + std::to_string(i + 1) + ": an item line is {\"item\": {...}}");
    }
    items.push_back(item->as_object());
  }
  return items;
}

void BuildCases(const std::vector<json::object>& items, const Build& build, ImportedTree& tree) {
  std::vector<json::object>& cases = tree.cases[build.skill];
  for (std::size_t i = 0; i < items.size(); ++i) {
    json::object c{{"id", "item_" + std::to_string(i + 1)}, {"input", items[i]}};
    json::array checks = ItemChecks(build, items[i]);
    if (!checks.empty()) c["checks"] = std::move(checks);
    if (build.exec) c["exec_check"] = *build.exec;
    cases.push_back(std::move(c));
  }
}

}  // namespace

Result<ImportedTree> ImportOpenAiEval(const fs::path& eval_file, const fs::path& data) {
  auto text = ReadText(eval_file);
  if (!text) return std::unexpected(std::move(text.error()));
  boost::system::error_code ec;
  json::value parsed = json::parse(*text, ec);
  if (ec || !parsed.is_object() || !parsed.as_object().contains("testing_criteria")) {
    return Fail(ErrorCode::kConfigInvalid, eval_file.string() + ": not an OpenAI eval object (no testing_criteria)");
  }
  const json::object& eval = parsed.as_object();
  ImportedTree tree;
  tree.source = "OpenAI eval " + eval_file.filename().string();
  tree.name = MakeId(Str(eval, "name").empty() ? eval_file.stem().string() : Str(eval, "name"));
  Build build;
  build.skill = tree.name;
  const json::value& criteria = eval.at("testing_criteria");
  for (std::size_t i = 0; criteria.is_array() && i < criteria.as_array().size(); ++i) {
    const std::string where = "testing_criteria[" + std::to_string(i) + "]";
    const json::object* c = criteria.as_array()[i].if_object();
    if (c && Criterion(*c, where, build, tree)) {
      ++tree.carried_assertions;
    } else if (!c || Str(*c, "type") != "python" || !build.exec) {
      tree.Report("grader " + (c ? Str(*c, "type") : std::string("?")), where);
    }
  }
  auto items = ReadItems(data);
  if (!items) return std::unexpected(std::move(items.error()));
  if (data.empty()) tree.Report("no items", "--data", "the skill has no cases: give --data ITEMS.jsonl");
  BuildCases(*items, build, tree);
  json::object input_schema = ItemSchema(eval, tree);
  if (input_schema.empty()) input_schema = InferInputSchema(*items);
  const std::string model = AddModel(tree, "openai:gpt-4o-mini", "", "the run's model");
  tree.Report("generation prompt", "(a run's input_messages)",
              "an eval object has none: skills/" + build.skill + "/skill.yaml shows the input; write the prompt");
  tree.skills[build.skill] = json::object{{"id", build.skill},
                                          {"template_type", "LLM_JSON_GENERATION"},
                                          {"model", model},
                                          {"prompt", json::object{{"user", "Answer for this input:\n{{input}}"}}},
                                          {"input_schema", std::move(input_schema)},
                                          {"output_schema", AnswerSchema()}};
  json::object entry{{"skill", build.skill}};
  if (!build.criteria.empty()) {
    json::array list(build.criteria.begin(), build.criteria.end());
    tree.rubrics[build.skill + "_graders"] = json::object{{"id", build.skill + "_graders"}, {"criteria", list}};
    entry["rubric"] = build.skill + "_graders";
    entry["judge_model"] = model;
  }
  tree.suite = json::object{{"id", tree.name}, {"skills", json::array{std::move(entry)}}};
  return tree;
}

}  // namespace skillrunner::importer
