#include "runner/eval/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace skillrunner::eval {

Result<DirLock> DirLock::Acquire(const std::filesystem::path& dir) {
  std::filesystem::path file = dir / ".lock";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(ErrorCode::kInternal, "cannot open " + file.string() + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Fail(ErrorCode::kInternal,
                  "another eval is writing " + dir.string() + " (it holds " + file.string() + ")");
    }
    return Fail(ErrorCode::kInternal, "cannot lock " + file.string() + ": " + std::strerror(error));
  }
  return DirLock(fd);
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace skillrunner::eval
