#include "tests/testutil/unprivileged.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace sift::test {

bool RunUnprivileged(const std::function<bool()>& check) {
  if (::geteuid() != 0) return check();
  std::fflush(nullptr);  // the child must not write the parent's buffers
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    constexpr uid_t kNobody = 65534;
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
      std::fprintf(stderr, "cannot drop privileges\n");
      _exit(2);
    }
    const bool ok = check();
    std::fflush(nullptr);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace sift::test
