# kvbench, the micro benchmarks and the peer comparison (doc/benchmarks.md).
# Included from bench/CMakeLists.txt.
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json REQUIRED)

set(SIFT_BENCH_DIR ${PROJECT_SOURCE_DIR}/bench)

# What kvbench and peer_bench share: keys, values, the Zipfian generator,
# threads and the progress bar.
add_library(kvbench_data STATIC
  ${SIFT_BENCH_DIR}/kvbench/keys.cc
  ${SIFT_BENCH_DIR}/kvbench/parallel.cc)
target_compile_options(kvbench_data PRIVATE ${SIFT_WARNINGS})
target_link_libraries(kvbench_data PUBLIC sift_util)

add_library(kvbench_lib STATIC
  ${SIFT_BENCH_DIR}/kvbench/filter_theory.cc
  ${SIFT_BENCH_DIR}/kvbench/report.cc
  ${SIFT_BENCH_DIR}/kvbench/runner.cc
  ${SIFT_BENCH_DIR}/kvbench/svg_plot.cc
  ${SIFT_BENCH_DIR}/kvbench/sweep.cc)
target_compile_options(kvbench_lib PRIVATE ${SIFT_WARNINGS})
target_link_libraries(kvbench_lib PUBLIC kvbench_data sift
                      nlohmann_json::nlohmann_json)

add_executable(kvbench ${SIFT_BENCH_DIR}/kvbench/kvbench.cc)
target_compile_options(kvbench PRIVATE ${SIFT_WARNINGS})
target_link_libraries(kvbench PRIVATE kvbench_lib CLI11::CLI11)

# One Google Benchmark binary for the components' micro benchmarks.
file(GLOB micro_srcs CONFIGURE_DEPENDS ${SIFT_BENCH_DIR}/micro/*.cc)
if(micro_srcs)
  add_executable(micro_bench ${micro_srcs})
  target_compile_options(micro_bench PRIVATE ${SIFT_WARNINGS})
  target_link_libraries(micro_bench PRIVATE kvbench_data sift
                        benchmark::benchmark_main)
endif()

# The side-by-side comparison with LevelDB and RocksDB, built only when both
# are installed (Debian: libleveldb-dev, librocksdb-dev).
find_package(leveldb CONFIG QUIET)
pkg_check_modules(ROCKSDB QUIET IMPORTED_TARGET rocksdb)
if(leveldb_FOUND AND ROCKSDB_FOUND)
  file(GLOB peer_srcs CONFIGURE_DEPENDS ${SIFT_BENCH_DIR}/peer/*.cc)
  if(peer_srcs)
    add_executable(peer_bench ${peer_srcs})
    target_compile_options(peer_bench PRIVATE ${SIFT_WARNINGS})
    target_link_libraries(peer_bench PRIVATE kvbench_data sift leveldb::leveldb
                          PkgConfig::ROCKSDB CLI11::CLI11
                          nlohmann_json::nlohmann_json)
  endif()
else()
  message(STATUS "peer_bench skipped: needs LevelDB (found: ${leveldb_FOUND}) "
                 "and RocksDB (found: ${ROCKSDB_FOUND})")
endif()

# Smoke tests: every workload, the sweep and the peer comparison on a tiny key
# space, so the programs cannot rot. kvbench fails if a read returns a wrong
# answer (a present key not found, an absent one found).
if(SIFT_BUILD_TESTS)
  # The top-level enable_testing() comes after add_subdirectory(bench).
  enable_testing()
  add_test(NAME kvbench_smoke
           COMMAND kvbench --num 3000 --reads 1000 --no_settle
                   --benchmarks fillseq,fillrandom,overwrite,readrandom,readmissing,readhot,seekrandom,readseq,compact,readmissing)
  add_test(NAME kvbench_sweep_smoke
           COMMAND kvbench --num 2000 --reads 500 --no_settle --sweep_bits 0,8
                   --sweep_out ${CMAKE_CURRENT_BINARY_DIR}/sweep-smoke)
  if(TARGET peer_bench)
    add_test(NAME peer_bench_smoke COMMAND peer_bench --num 2000 --reads 500)
  endif()
endif()
