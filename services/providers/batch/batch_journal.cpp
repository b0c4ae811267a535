#include "services/providers/batch/batch_journal.h"

#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>

namespace skillrunner::providers {
namespace json = boost::json;

Result<std::unique_ptr<BatchJournal>> BatchJournal::Open(const std::filesystem::path& file) {
  std::vector<json::object> recorded;
  int last_round = 0;
  {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      boost::system::error_code ec;
      json::value value = json::parse(line, ec);
      if (ec || !value.is_object()) continue;  // a torn last line
      if (const json::value* round = value.as_object().if_contains("round"); round && round->is_int64()) {
        last_round = std::max(last_round, static_cast<int>(round->as_int64()));
      }
      recorded.push_back(std::move(value.as_object()));
    }
  }
  std::FILE* out = std::fopen(file.c_str(), "a");
  if (out == nullptr) return Fail(ErrorCode::kInternal, "cannot write " + file.string());
  return std::unique_ptr<BatchJournal>(new BatchJournal(file, out, std::move(recorded), last_round));
}

BatchJournal::BatchJournal(std::filesystem::path file, std::FILE* out, std::vector<json::object> recorded,
                           int last_round)
    : file_(std::move(file)), out_(out), recorded_(std::move(recorded)), last_round_(last_round) {}

BatchJournal::~BatchJournal() { std::fclose(out_); }

int BatchJournal::NextRound() {
  std::lock_guard lock(mutex_);
  return ++last_round_;
}

bool BatchJournal::Append(const json::object& line) { return AppendAll({line}); }

bool BatchJournal::AppendAll(const std::vector<json::object>& lines) {
  std::string text;
  for (const json::object& line : lines) text += json::serialize(line) + "\n";
  {
    std::lock_guard lock(mutex_);
    if (std::fwrite(text.data(), 1, text.size(), out_) != text.size()) return false;
    if (std::fflush(out_) != 0) return false;
    if (::fdatasync(fileno(out_)) != 0) return false;
  }
  if (observer_) {
    for (const json::object& line : lines) observer_(line);
  }
  return true;
}

}  // namespace skillrunner::providers
