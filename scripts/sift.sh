#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   bash scripts/sift.sh bench   install what is missing, build (Release), run kvbench's default
#                                read-amplification workload on a fresh temporary database
#   bash scripts/sift.sh test    install what is missing, build with assertions on and with
#                                ASan+UBSan (and TSan for the concurrency tests), run every test,
#                                and check that an outside program builds against the installed package
#   bash scripts/sift.sh build   install what is missing and build the Release tree only
# Every step is incremental: build trees live in build/<kind>/ and are reused.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

PACKAGES=(cmake ninja-build g++ make pkg-config git
          libabsl-dev libsnappy-dev libxxhash-dev libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev libleveldb-dev librocksdb-dev)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# configure_build DIR [cmake args...] then build the given targets (all if none after --).
configure() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$root" -B "$dir" -G Ninja "$@" >/dev/null
  else
    cmake "$dir" >/dev/null  # picks up new files (CONFIGURE_DEPENDS globs)
  fi
}

build_release() {
  configure build/release -DCMAKE_BUILD_TYPE=Release -DSIFT_BUILD_TESTS=OFF
  cmake --build build/release -j"$jobs"
}

run_bench() {
  build_release
  if [ -x build/release/bench/kvbench ]; then
    build/release/bench/kvbench "$@"
  else
    echo "sift built in build/release; kvbench is not part of the tree yet, so there is no workload to run."
  fi
}

run_tests() {
  local failed=0
  echo "== build 1/3: assertions on (RelWithDebInfo, -UNDEBUG)"
  configure build/assert -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIFT_ASSERTIONS=ON -DSIFT_BUILD_BENCH=ON
  cmake --build build/assert -j"$jobs"
  (cd build/assert && ctest -j"$jobs" --output-on-failure --timeout 900) || failed=1

  echo "== build 2/3: AddressSanitizer + UndefinedBehaviorSanitizer"
  configure build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIFT_ASSERTIONS=ON \
    -DSIFT_SANITIZE=address,undefined -DSIFT_BUILD_BENCH=OFF
  cmake --build build/asan -j"$jobs"
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SIFT_SANITIZED=1 \
     ctest -j"$jobs" --output-on-failure --timeout 900) || failed=1

  echo "== build 3/3: ThreadSanitizer (the *Concurrency* and *Stress* suites)"
  configure build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIFT_ASSERTIONS=ON \
    -DSIFT_SANITIZE=thread -DSIFT_BUILD_BENCH=OFF -DSIFT_BUILD_TOOLS=OFF
  local tsan_bins=()
  for t in util_tests db_tests reliability_tests; do
    [ -n "$(ls tests/${t%_tests}/*_test.cc 2>/dev/null)" ] && tsan_bins+=("$t")
  done
  cmake --build build/tsan -j"$jobs" --target "${tsan_bins[@]}"
  for t in "${tsan_bins[@]}"; do
    echo "-- $t under TSan"
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 SIFT_SANITIZED=1 \
      "build/tsan/tests/$t" --gtest_filter='*Concurrency*:*Stress*' --gtest_brief=1 || failed=1
  done

  echo "== installed-package check: find_package(sift) from an outside program"
  rm -rf build/install-prefix build/install-check
  cmake --install build/assert --prefix "$root/build/install-prefix" >/dev/null
  cmake -S tests/install_check -B build/install-check -G Ninja \
    -DCMAKE_PREFIX_PATH="$root/build/install-prefix" >/dev/null
  cmake --build build/install-check -j"$jobs"
  (cd build/install-check && ctest --output-on-failure) || failed=1

  if [ $failed -ne 0 ]; then
    echo "== FAILED"
    return 1
  fi
  echo "== all test runs passed"
}

cmd=${1:-bench}
shift || true
install_missing
case "$cmd" in
  bench) run_bench "$@" ;;
  test) run_tests ;;
  build) build_release ;;
  *) echo "usage: bash scripts/sift.sh [bench|test|build]" >&2; exit 2 ;;
esac
