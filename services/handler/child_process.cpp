#include "services/handler/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <system_error>

extern char** environ;

namespace skillrunner::handler {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string ErrnoMessage(int error) { return std::error_code(error, std::generic_category()).message(); }

namespace {

bool IsExecutableFile(const std::filesystem::path& path) {
  std::error_code ec;
  return ::access(path.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(path, ec);
}

std::filesystem::path Absolute(const std::filesystem::path& path) {
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute;
}

}  // namespace

std::expected<std::filesystem::path, int> ResolveProgram(const std::string& name,
                                                         const std::filesystem::path& working_dir) {
  if (name.empty()) return std::unexpected(ENOENT);
  if (name.find('/') != std::string::npos) {
    return Absolute(working_dir / name);
  }
  const char* path_env = std::getenv("PATH");
  std::string_view dirs = path_env != nullptr ? path_env : "/usr/bin:/bin";
  int error = ENOENT;
  while (!dirs.empty()) {
    std::size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
    if (dir.empty()) continue;  // "current directory": whose? Not ours.
    std::filesystem::path candidate = Absolute(std::filesystem::path(dir) / name);
    if (IsExecutableFile(candidate)) return candidate;
    if (errno == EACCES) error = EACCES;
  }
  return std::unexpected(error);
}

namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

int MakePipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  pipe.read = UniqueFd(fds[0]);
  pipe.write = UniqueFd(fds[1]);
  return 0;
}

// posix_spawn's two attribute objects, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawn_file_actions_init(&actions_);
    ::posix_spawnattr_init(&attr_);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  int Configure(const Pipe& in, const Pipe& out, const Pipe& err, const std::filesystem::path& working_dir) {
    // The pipes are close-on-exec; dup2 gives the child its copies on 0/1/2.
    if (int rc = ::posix_spawn_file_actions_adddup2(&actions_, in.read.get(), 0)) return rc;
    if (int rc = ::posix_spawn_file_actions_adddup2(&actions_, out.write.get(), 1)) return rc;
    if (int rc = ::posix_spawn_file_actions_adddup2(&actions_, err.write.get(), 2)) return rc;
    if (!working_dir.empty()) {
      if (int rc = ::posix_spawn_file_actions_addchdir_np(&actions_, working_dir.c_str())) return rc;
    }
    if (int rc = ::posix_spawn_file_actions_addclosefrom_np(&actions_, 3)) return rc;
    return ConfigureAttributes();
  }

  int Spawn(pid_t& pid, const std::filesystem::path& program, char* const argv[]) {
    return ::posix_spawn(&pid, program.c_str(), &actions_, &attr_, argv, environ);
  }

 private:
  int ConfigureAttributes() {
    // A new process group (so a timeout kills grandchildren too), no blocked
    // signals, and signals this service may ignore (SIGPIPE) back at default.
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (int rc = ::posix_spawnattr_setflags(&attr_, flags)) return rc;
    if (int rc = ::posix_spawnattr_setpgroup(&attr_, 0)) return rc;
    sigset_t mask;
    sigemptyset(&mask);
    if (int rc = ::posix_spawnattr_setsigmask(&attr_, &mask)) return rc;
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int sig :
         {SIGPIPE, SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU}) {
      sigaddset(&defaults, sig);
    }
    return ::posix_spawnattr_setsigdefault(&attr_, &defaults);
  }

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

}  // namespace

std::expected<SpawnedChild, int> SpawnChild(const std::filesystem::path& program, const std::vector<std::string>& argv,
                                            const std::filesystem::path& working_dir) {
  Pipe in, out, err;
  for (Pipe* pipe : {&in, &out, &err}) {
    if (int rc = MakePipe(*pipe)) return std::unexpected(rc);
  }
  SpawnSetup setup;
  if (int rc = setup.Configure(in, out, err, working_dir)) {
    return std::unexpected(rc);
  }
  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);

  SpawnedChild child;
  if (int rc = setup.Spawn(child.pid, program, c_argv.data())) {
    return std::unexpected(rc);
  }
  child.stdin_write = std::move(in.write);
  child.stdout_read = std::move(out.read);
  child.stderr_read = std::move(err.read);
  return child;  // the child's ends close here, in the parent
}

UniqueFd OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
  (void)pid;
  return UniqueFd();
#endif
}

}  // namespace skillrunner::handler
