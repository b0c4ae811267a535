#pragma once

// Internal to services/handler: the POSIX half of AsioProcessRunner (finding
// the program, spawning it). No Asio here.

#include <sys/types.h>

#include <expected>
#include <filesystem>
#include <string>
#include <vector>

namespace skillrunner::handler {

// Owns one file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  void Reset();

 private:
  int fd_ = -1;
};

// The program to execute for `name` (argv[0]): with a slash, `working_dir /
// name` made absolute; without one, the first executable regular file named
// so in a PATH directory. On failure, an errno value (ENOENT, EACCES).
std::expected<std::filesystem::path, int> ResolveProgram(const std::string& name,
                                                         const std::filesystem::path& working_dir);

// A started child: its pid (also its process group id) and our ends of its
// stdin, stdout and stderr pipes (close-on-exec).
struct SpawnedChild {
  pid_t pid = -1;
  UniqueFd stdin_write;
  UniqueFd stdout_read;
  UniqueFd stderr_read;
};

// posix_spawn of `program` with `argv` in `working_dir` (empty: ours), in a
// new process group, with stdin/stdout/stderr on fresh pipes, no other file
// descriptor inherited, an empty signal mask and the usual signals at their
// default. Safe in a multi-threaded process (no fork). On failure, an errno
// value (exec failures such as ENOENT, EACCES, ENOEXEC included).
std::expected<SpawnedChild, int> SpawnChild(const std::filesystem::path& program, const std::vector<std::string>& argv,
                                            const std::filesystem::path& working_dir);

// A pidfd for `pid`, or an invalid fd where the kernel has none.
UniqueFd OpenPidFd(pid_t pid);

// "No such file or directory" for ENOENT.
std::string ErrnoMessage(int error);

}  // namespace skillrunner::handler
