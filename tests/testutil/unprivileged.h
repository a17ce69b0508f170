#ifndef SIFT_TESTS_TESTUTIL_UNPRIVILEGED_H_
#define SIFT_TESTS_TESTUTIL_UNPRIVILEGED_H_

#include <functional>

namespace sift::test {

// Runs `check` where file permissions apply and returns what it returns.
// Root is exempt from permission checks, so as root `check` runs in a forked
// child that drops to user and group 65534 ("nobody"); otherwise it runs
// here, as the owner of the test's files. So a file `check` must be refused
// needs mode bits that deny both its owner and others (0000, 0444, ...), and
// a directory it must reach needs search permission for others.
// The child reports on stderr; only its result comes back.
bool RunUnprivileged(const std::function<bool()>& check);

}  // namespace sift::test

#endif  // SIFT_TESTS_TESTUTIL_UNPRIVILEGED_H_
