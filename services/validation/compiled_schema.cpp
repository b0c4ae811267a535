#include "services/validation/compiled_schema.h"

#include <stdexcept>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "services/validation/custom_constraints.h"
#include "services/validation/error_report.h"
#include "services/validation/number_normalise.h"
#include "services/validation/schema_rewrite.h"

namespace skillrunner::validation {

namespace {

constexpr std::size_t kMaxInstanceDepth = 512;

}  // namespace

class CompiledSchemaImpl {
 public:
  boost::json::value source;
  Draft draft = Draft::k7;
  // The rewritten root document and every fetched one; `nodes` points into them.
  std::vector<std::unique_ptr<boost::json::value>> documents;
  std::vector<const boost::json::object*> nodes;
  valijson::Schema schema;
};

namespace {

using Parser = valijson::SchemaParser;
using Adapter = valijson::adapters::BoostJsonAdapter;

// valijson's fetch callback: our fetcher, then the same normalisation and
// rewrite as the root document. The documents stay owned by `impl`.
Parser::FunctionPtrs<Adapter>::FetchDoc MakeFetcher(CompiledSchemaImpl& impl, SchemaRewriter& rewriter,
                                                    const CompileOptions& options) {
  return [&impl, &rewriter, &options](const std::string& uri) -> const boost::json::value* {
    if (!options.fetch) {
      throw std::runtime_error("remote $ref \"" + uri + "\" cannot be resolved (no document fetcher)");
    }
    std::optional<boost::json::value> fetched = options.fetch(uri);
    if (!fetched) throw std::runtime_error("remote $ref \"" + uri + "\" could not be fetched");
    auto document = std::make_unique<boost::json::value>(std::move(*fetched));
    NormaliseNumbers(*document);
    if (auto problem = rewriter.Rewrite(*document, impl.documents.size())) {
      throw std::runtime_error("in \"" + uri + "\": " + *problem);
    }
    impl.documents.push_back(std::move(document));
    return impl.documents.back().get();
  };
}

std::optional<std::string> Populate(CompiledSchemaImpl& impl, const CompileOptions& options) {
  SchemaRewriter rewriter(impl.draft);
  auto root = std::make_unique<boost::json::value>(impl.source);
  NormaliseNumbers(*root);
  if (auto problem = rewriter.Rewrite(*root, 0)) return problem;
  impl.documents.push_back(std::move(root));
  Parser parser(impl.draft == Draft::k4 ? Parser::kDraft4 : Parser::kDraft7);
  AddCustomConstraints(parser);
  try {
    parser.populateSchema(Adapter(*impl.documents.front()), impl.schema, MakeFetcher(impl, rewriter, options),
                          [](const boost::json::value*) {});
  } catch (const std::exception& e) {
    return std::string("invalid schema: ") + e.what();
  }
  for (const auto& location : rewriter.nodes()) {
    boost::system::error_code ec;
    const boost::json::value* node = impl.documents[location.document]->find_pointer(location.pointer, ec);
    impl.nodes.push_back(node != nullptr ? node->if_object() : nullptr);
  }
  return std::nullopt;
}

std::vector<FieldError> ValidateWith(const CompiledSchemaImpl& impl, const boost::json::value& instance,
                                     const boost::json::value& normalised) {
  // A Validator caches compiled regexes and is not thread-safe: one per thread,
  // shared by every schema (the cache is keyed by pattern).
  thread_local valijson::Validator validator;
  Adapter adapter(normalised);
  if (validator.validate(impl.schema, adapter, nullptr)) return {};
  valijson::ValidationResults results;
  validator.validate(impl.schema, adapter, &results);
  return BuildReport(results, impl.nodes, instance, impl.draft == Draft::k4);
}

}  // namespace

Result<std::shared_ptr<const CompiledSchema>> CompiledSchema::Compile(const boost::json::value& schema,
                                                                      const CompileOptions& options) {
  auto draft = DetectDraft(schema);
  if (!draft) return std::unexpected(std::move(draft.error()));
  auto impl = std::make_unique<CompiledSchemaImpl>();
  impl->source = schema;
  impl->draft = *draft;
  try {
    if (auto problem = Populate(*impl, options)) return Fail(ErrorCode::kConfigInvalid, std::move(*problem));
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kConfigInvalid, std::string("invalid schema: ") + e.what());
  }
  return std::shared_ptr<const CompiledSchema>(new CompiledSchema(std::move(impl)));
}

CompiledSchema::CompiledSchema(std::unique_ptr<CompiledSchemaImpl> impl) : impl_(std::move(impl)) {}

CompiledSchema::~CompiledSchema() = default;

const boost::json::value& CompiledSchema::source() const { return impl_->source; }

std::vector<FieldError> CompiledSchema::Validate(const boost::json::value& instance) const {
  const InstanceShape shape = InspectInstance(instance, kMaxInstanceDepth);
  if (shape.too_deep) {
    return {{"", "value is nested deeper than " + std::to_string(kMaxInstanceDepth) + " levels"}};
  }
  try {
    if (!shape.has_uint64) return ValidateWith(*impl_, instance, instance);
    boost::json::value normalised = instance;
    NormaliseNumbers(normalised);
    return ValidateWith(*impl_, instance, normalised);
  } catch (const std::exception& e) {
    return {{"", std::string("validation failed: ") + e.what()}};
  }
}

}  // namespace skillrunner::validation
