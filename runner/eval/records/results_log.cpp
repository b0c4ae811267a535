#include "runner/eval/records/results_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "services/common/json_text.h"
#include "services/common/utf8.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

std::unexpected<Error> Errno(const std::string& what, const std::filesystem::path& file) {
  return Fail(ErrorCode::kInternal, "cannot " + what + " " + file.string() + ": " + std::strerror(errno));
}

}  // namespace

Result<void> WriteAll(int fd, std::string_view text, const std::filesystem::path& file) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write", file);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Result<std::unique_ptr<ResultsWriter>> ResultsWriter::Open(const std::filesystem::path& file, const Clock& clock) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", file);
  return std::unique_ptr<ResultsWriter>(new ResultsWriter(fd, file, clock));
}

ResultsWriter::~ResultsWriter() {
  (void)Flush();
  ::close(fd_);
}

Result<void> WriteLineOrTruncate(int fd, std::string_view line, const std::filesystem::path& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Errno("stat", file);
  off_t before = st.st_size;  // O_APPEND: the line goes here
  auto written = WriteAll(fd, line, file);
  if (written) return written;
  // Part of the line may be on disk: cut it away so that the file ends on a
  // whole line, as if this write had never begun.
  int saved = errno;
  if (::ftruncate(fd, before) != 0) {
    written.error().message += "; cutting the partial line back off failed too: " + std::string(std::strerror(errno));
    return written;
  }
  errno = saved;
  return written;
}

Result<void> ResultsWriter::Append(const json::object& record) {
  std::string line = CompactJson(record);
  // Boost.JSON writes string bytes as they are: a string holding invalid
  // UTF-8 would make a line its parser (and so --resume and merge) rejects.
  if (!IsValidUtf8(line)) line = SanitizeUtf8(line);
  line.push_back('\n');
  std::lock_guard lock(mutex_);
  if (failed_) {
    return Fail(ErrorCode::kInternal,
                "not writing to " + file_.string() + " after an earlier write failed: " + failed_->message);
  }
  if (auto written = WriteLineOrTruncate(fd_, line, file_); !written) {
    failed_ = written.error();
    return written;
  }
  ++unsynced_;
  if (unsynced_ >= kSyncEvery || clock_.Now() - last_sync_ >= kSyncInterval) {
    return SyncLocked();
  }
  return {};
}

Result<void> ResultsWriter::Flush() {
  std::lock_guard lock(mutex_);
  return SyncLocked();
}

Result<void> ResultsWriter::SyncLocked() {
  last_sync_ = clock_.Now();
  if (unsynced_ == 0) return {};
  unsynced_ = 0;
  if (::fdatasync(fd_) != 0) return Errno("fsync", file_);
  return {};
}

Result<LoadedResults> ReadResults(const std::filesystem::path& file, bool repair) {
  LoadedResults out;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return out;
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail(ErrorCode::kInternal, "cannot read " + file.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  std::size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    ++line_number;
    std::size_t end = text.find('\n', pos);
    bool terminated = end != std::string::npos;
    std::string_view line(text.data() + pos, (terminated ? end : text.size()) - pos);
    json::value value = json::parse(line, ec);
    if ((ec || !value.is_object()) && !IsValidUtf8(line)) {
      // Written before the writer sanitised strings: keep the record, with
      // U+FFFD for the bytes that were not UTF-8.
      ec.clear();
      value = json::parse(SanitizeUtf8(line), ec);
      if (!ec && value.is_object()) ++out.repaired_lines;
    }
    bool good = !ec && value.is_object();
    if (!good && !terminated) {
      // Only a line without its newline can be a write that a crash cut
      // short (each record is one write of the line and its newline): drop it.
      out.torn_bytes = text.size() - pos;
      std::error_code cut;  // not `ec`, which still holds the parse error
      if (repair) std::filesystem::resize_file(file, pos, cut);
      if (cut) {
        return Fail(ErrorCode::kInternal,
                    "cannot truncate the torn last line of " + file.string() + ": " + cut.message());
      }
      break;
    }
    if (!good && line.find_first_not_of(" \t\r") != std::string_view::npos) {
      return Fail(ErrorCode::kInternal, file.string() + ":" + std::to_string(line_number) +
                                            ": not a JSON object (results.jsonl holds one record per line)");
    }
    if (good && !terminated) {
      // A whole record whose newline never made it: keep it, end the line.
      if (repair) {
        std::ofstream(file, std::ios::binary | std::ios::app) << '\n';
      }
    }
    if (good) out.records.push_back(std::move(value.as_object()));
    if (!terminated) break;
    pos = end + 1;
  }
  return out;
}

Result<void> WriteFileAtomically(const std::filesystem::path& file, std::string_view text) {
  std::filesystem::path temp = file;
  temp += ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("write", temp);
  auto written = WriteAll(fd, text, temp);
  if (written && ::fdatasync(fd) != 0) written = Errno("fsync", temp);
  ::close(fd);
  if (!written) return written;
  if (::rename(temp.c_str(), file.c_str()) != 0) return Errno("rename", temp);
  return {};
}

}  // namespace skillrunner::eval
