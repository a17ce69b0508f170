#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   bash scripts/sift.sh bench   install what is missing, build kvbench (Release), run its default
#                                read-amplification workload on a fresh temporary database
#   bash scripts/sift.sh test    install what is missing, build with assertions on and with
#                                ASan+UBSan (and TSan for the concurrency tests), run every test,
#                                build and test the plain Release configuration a user gets, and
#                                check that outside programs build against the installed package
#                                (CMake's find_package and pkg-config)
#   bash scripts/sift.sh build   install what is missing and build the Release tree only
# Every step is incremental: build trees live in build/<kind>/ and are reused. The CI builds
# (assert, asan, tsan) turn warnings into errors (-DSIFT_WERROR=ON); build/release is configured
# exactly as the README tells a user to, with no extra flags.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

PACKAGES=(cmake ninja-build g++ make pkg-config git
          libabsl-dev libsnappy-dev libxxhash-dev libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev libleveldb-dev librocksdb-dev)

# The Python package (python/) and the peers its benchmark compares with, all from Debian, for
# Debian's interpreter /usr/bin/python3.
PACKAGES+=(python3 python3-dev python3-pip python3-venv python3-setuptools pybind11-dev
           python3-pytest python3-plyvel python3-lmdb)
# sift.dask (python/sift/dask.py) runs on Debian's Dask, distributed and pandas.
PACKAGES+=(python3-dask python3-distributed python3-pandas)

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

# configure DIR [cmake args...]: a CI tree (Ninja, warnings are errors). The arguments are
# passed again on every run, so a tree configured by an older version of this script takes the
# current flags (and cmake picks up new files: CONFIGURE_DEPENDS globs).
configure() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$root" -B "$dir" -G Ninja -DSIFT_WERROR=ON "$@" >/dev/null
  else
    cmake "$dir" -DSIFT_WERROR=ON "$@" >/dev/null
  fi
}

# Compiler flags of the CI trees. Compiling is most of a CI run, so the debug information is line
# tables only (-g1: what a stack trace or a sanitizer report needs, a quarter less compile time
# than -g), and the sanitizer trees optimize at -O1 (two fifths less compile time than -O2 under
# ASan+UBSan, and their tests ran no slower). Measured on one test source
# (tests/db/compaction_test.cc, CPU seconds): -O2 -g 15.5 -> -O2 -g1 11.3 with assertions;
# ASan+UBSan -O2 -g 38.6 -> -O1 -g1 23.1.
ci_flags_o2=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
ci_flags_o1=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

# build/release: the README's plain configuration (default generator, no options but the
# build type). A tree left by an older layout of this script (Ninja, tests off) is redone.
configure_release() {
  local cache=build/release/CMakeCache.txt
  if [ -f "$cache" ] && grep -qE '^(CMAKE_GENERATOR:INTERNAL=Ninja|SIFT_BUILD_TESTS:BOOL=OFF)' "$cache"; then
    rm -rf build/release
  fi
  if [ ! -f "$cache" ]; then
    cmake -S "$root" -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
}

build_release() {
  configure_release
  cmake --build build/release -j"$jobs" "$@"
}

run_bench() {
  build_release --target kvbench
  build/release/bench/kvbench "$@"
}

# build/bindings/prefix: the engine's libraries for both language packages, installed from
# build/release (the plain Release build; its libraries are position-independent, so a Python or
# Node.js module can link them) into a prefix of their own that is never wiped, so files already up
# to date keep their time stamps and nothing downstream rebuilds. python_tests and node_tests hand
# that prefix to pip and npm (SIFT_ENGINE_PREFIX), so the packages' CMake builds
# (python/CMakeLists.txt, node/CMakeLists.txt) find it with find_package(sift) and compile only
# their own sources; without SIFT_ENGINE_PREFIX (a user's pip or npm install) they build the
# engine themselves.
bindings_prefix="$root/build/bindings/prefix"
build_bindings_engine() {
  build_release
  cmake --install build/release --prefix "$bindings_prefix" >/dev/null
}

# The README's install route for the Python package, with Debian's interpreter (another python3
# may come first on PATH): pip builds it through python/CMakeLists.txt in build/python (reused,
# incremental; the engine from build/bindings/prefix), installs it into build/python/site, and the
# pytest suite runs against that copy. A tree left by an older layout of this script (the engine
# built inside it, in build/python/sift) is redone.
python_tests() {
  local site="$root/build/python/site"
  [ ! -d build/python/sift ] || rm -rf build/python
  rm -rf "$site"
  PIP_ROOT_USER_ACTION=ignore SIFT_PYTHON_BUILD_DIR="$root/build/python" SIFT_BUILD_JOBS="$jobs" \
    SIFT_ENGINE_PREFIX="$bindings_prefix" \
    /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-build-isolation \
    --no-deps --target "$site" ./python || return 1
  (cd "$root/build/python" &&
   PYTHONPATH="$site" /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/python/tests")
}

# The Node.js package (node/): npm ci (or npm install without a lock) in node/, which runs the
# package's install script, the CMake build of the addon in build/node (reused, incremental; the
# engine from build/bindings/prefix; a tree of an older layout, with the engine built inside it in
# build/node/sift, is redone); then npm test (abstract-level's compliance suite and the package's
# own tests, one TAP stream) and a plain count from tape's summary. Node and npm are not among the
# PACKAGES: Debian's nodejs would conflict with the Node 20 / npm 11 these machines carry.
node_tests() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node: node and npm are required for the Node.js package (node/) and were not found on PATH"
    return 1
  fi
  local log="$root/build/node/npm-test.log"
  [ ! -d build/node/sift ] || rm -rf build/node
  (cd node && export SIFT_BUILD_JOBS="$jobs" SIFT_ENGINE_PREFIX="$bindings_prefix" &&
   if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else
     npm install --no-audit --no-fund; fi) || { echo "node: npm install or the addon build failed"; return 1; }
  local status=0
  (cd node && npm test) > "$log" 2>&1 || status=1
  local passed failed
  passed=$(sed -n 's/^# pass  *\([0-9]*\)$/\1/p' "$log" | tail -n 1)
  failed=$(sed -n 's/^# fail  *\([0-9]*\)$/\1/p' "$log" | tail -n 1)
  echo "node: ${passed:-0} passed, ${failed:-0} failed"
  if [ "$status" -ne 0 ] || [ "${failed:-0}" -ne 0 ] || [ -z "$passed" ]; then
    grep -B 2 -A 12 '^not ok' "$log" | head -n 80
    echo "node: the full TAP output is in $log"
    return 1
  fi
}

run_tests() {
  local failed=0
  echo "== build 1/4: assertions on (RelWithDebInfo, -UNDEBUG)"
  configure build/assert -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ci_flags_o2[@]}" -DSIFT_ASSERTIONS=ON \
    -DSIFT_BUILD_BENCH=ON
  cmake --build build/assert -j"$jobs"
  (cd build/assert && ctest -j"$jobs" --output-on-failure --timeout 900) || failed=1

  echo "== build 2/4: AddressSanitizer + UndefinedBehaviorSanitizer"
  configure build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ci_flags_o1[@]}" -DSIFT_ASSERTIONS=ON \
    -DSIFT_SANITIZE=address,undefined -DSIFT_BUILD_BENCH=OFF
  cmake --build build/asan -j"$jobs"
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SIFT_SANITIZED=1 \
     ctest -j"$jobs" --output-on-failure --timeout 900) || failed=1

  echo "== build 3/4: ThreadSanitizer (the *Concurrency* and *Stress* suites)"
  configure build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ci_flags_o1[@]}" -DSIFT_ASSERTIONS=ON \
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

  echo "== build 4/4: the plain Release configuration a user builds (warnings not errors)"
  # The reliability campaigns (label reliability) already ran in builds 1 and 2.
  build_release
  (cd build/release && ctest -j"$jobs" --output-on-failure --timeout 900 -LE reliability) || failed=1

  echo "== installed-package check: outside C++ and C programs through find_package(sift) and pkg-config"
  local prefix="$root/build/install-prefix"
  rm -rf "$prefix" build/install-check
  cmake --install build/release --prefix "$prefix" >/dev/null
  cmake -S tests/install_check -B build/install-check -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build build/install-check -j"$jobs"
  (cd build/install-check && ctest --output-on-failure) || failed=1
  # The README's pkg-config route: compile and link with nothing but what sift.pc says.
  local pcdir pcflags
  pcdir=$(dirname "$(find "$prefix" -name sift.pc | head -n 1)")
  if pcflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs sift) &&
     g++ -o build/install-check/pkgconfig_check tests/install_check/main.cc $pcflags; then
    build/install-check/pkgconfig_check "$root/build/install-check/pkgconfig-db" || failed=1
  else
    echo "pkg-config route: compile or link failed"; failed=1
  fi
  # The same for the C API: a C program, compiled by the C compiler, with sift_c.pc.
  if pcflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs sift_c) &&
     gcc -std=c99 -o build/install-check/pkgconfig_check_c tests/install_check/main.c $pcflags; then
    build/install-check/pkgconfig_check_c "$root/build/install-check/pkgconfig-db-c" || failed=1
  else
    echo "pkg-config route (sift_c): compile or link failed"; failed=1
  fi

  echo "== engine libraries for the Python and Node.js packages (build/release, installed into build/bindings/prefix)"
  build_bindings_engine

  echo "== python bindings: pip install --no-build-isolation ./python, then its pytest suite"
  python_tests || failed=1

  echo "== node: npm ci in node/ (builds the addon in build/node), then npm test (abstract-level's suite and the package's own)"
  node_tests || failed=1

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
