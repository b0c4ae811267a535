#pragma once

// What the importers share: reading the files a suite names, the models
// table from a provider id, a skill's input schema from its cases, and a
// template's placeholders in skillrunner's form.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runner/importer/imported_tree.h"
#include "services/common/error.h"

namespace skillrunner::importer {

// A file's text; CONFIG_INVALID naming it when it cannot be read.
Result<std::string> ReadText(const std::filesystem::path& file);

// A YAML (or JSON) file as JSON; CONFIG_INVALID with file:line:col when it does not parse.
Result<boost::json::value> ReadYamlFile(const std::filesystem::path& file);

// Rows of a data file by its extension: .csv (a header row of names; every
// value a string), .jsonl (one JSON value a line), .json and .yaml/.yml (an
// array). CONFIG_INVALID with file:line when a row is bad.
Result<boost::json::array> ReadRows(const std::filesystem::path& file);

// The model a provider id names, entered into tree.config's providers and
// models ("openai:chat:gpt-4o-mini" -> model gpt-4o-mini on provider openai).
// `base_url` overrides the kind's. An id of no kind skillrunner has becomes a
// model on a simulated provider named "unmapped", and is reported at `where`.
std::string AddModel(ImportedTree& tree, std::string_view provider_id, std::string_view base_url,
                     const std::string& where);

// An object schema whose properties are the inputs' members, each typed by
// the values it takes (one type when every case agrees), required when every
// case has it.
boost::json::object InferInputSchema(const std::vector<boost::json::object>& inputs);

// A template's placeholders for skillrunner: each {{ name }} or {{ name.path }}
// whose head is a variable becomes {{input.name.path}} (`strip`: a head to
// drop first, as OpenAI's "item"); a filter after one ({{ name | upper }}) is
// dropped and reported; other Nunjucks or Jinja ({% ... %}, expressions) is
// removed and reported at `where`.
std::string ConvertTemplate(std::string_view text, std::string_view strip, ImportedTree& tree,
                            const std::string& where);

// The default output of a prompt with no schema of its own.
boost::json::object AnswerSchema();

// `id`, or id_2, id_3, ... when taken.
std::string UniqueId(const std::string& id, std::vector<std::string>& taken);

}  // namespace skillrunner::importer
