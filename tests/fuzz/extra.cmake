# tests/fuzz: fuzz targets (LLVMFuzzerTestOneInput), their seed corpus and
# its generator.
#
# Every build (g++ or clang) links each target with replay_main.cc into
# fuzz_replay_<target> and registers a ctest test that runs it over the
# committed corpus in tests/fuzz/corpus/<target>/, so the ASan/UBSan build
# replays the corpus.
#
# With -DSIFT_FUZZ=ON (clang only) each target is also linked with libFuzzer
# as fuzz_<target>, and the sift libraries get coverage instrumentation:
#   cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#     -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
#     -DSIFT_SANITIZE=address,undefined -DSIFT_FUZZ=ON \
#     -DSIFT_BUILD_BENCH=OFF -DSIFT_BUILD_TOOLS=OFF
#   cmake --build build/fuzz --target fuzz_block
#   build/fuzz/tests/fuzz_block -max_total_time=300 /tmp/block-corpus \
#     tests/fuzz/corpus/block
# (Debian: clang and libclang-rt-14-dev provide libFuzzer.)

option(SIFT_FUZZ "Build libFuzzer targets (needs clang)" OFF)

set(SIFT_FUZZ_TARGETS block table filter fuse wal manifest db_ops)
set(sift_fuzz_dir ${CMAKE_CURRENT_LIST_DIR})

if(SIFT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SIFT_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++)")
  endif()
  if(NOT SIFT_SANITIZE MATCHES "address")
    message(FATAL_ERROR "SIFT_FUZZ needs -DSIFT_SANITIZE=address,undefined")
  endif()
  # Coverage feedback from the code under test, not only from the targets.
  # (-Wno-unknown-warning-option: SIFT_WARNINGS may carry GCC-only flags.)
  foreach(lib sift_util sift_filter sift_table sift_db)
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link
                           -Wno-unknown-warning-option)
  endforeach()
endif()

add_executable(fuzz_seed_corpus_gen ${sift_fuzz_dir}/seed_corpus_gen.cc)
target_compile_options(fuzz_seed_corpus_gen PRIVATE ${SIFT_WARNINGS})
target_include_directories(fuzz_seed_corpus_gen PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(fuzz_seed_corpus_gen PRIVATE sift)

foreach(t ${SIFT_FUZZ_TARGETS})
  add_executable(fuzz_replay_${t} ${sift_fuzz_dir}/${t}_fuzzer.cc
                                  ${sift_fuzz_dir}/replay_main.cc)
  target_compile_options(fuzz_replay_${t} PRIVATE ${SIFT_WARNINGS})
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(fuzz_replay_${t} PRIVATE -Wno-unknown-warning-option)
  endif()
  target_include_directories(fuzz_replay_${t} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(fuzz_replay_${t} PRIVATE sift)
  add_test(NAME fuzz_replay_${t}
           COMMAND fuzz_replay_${t} ${sift_fuzz_dir}/corpus/${t})
  set_tests_properties(fuzz_replay_${t} PROPERTIES LABELS fuzz TIMEOUT 300)

  if(SIFT_FUZZ)
    add_executable(fuzz_${t} ${sift_fuzz_dir}/${t}_fuzzer.cc)
    target_compile_options(fuzz_${t} PRIVATE ${SIFT_WARNINGS} -fsanitize=fuzzer
                           -Wno-unknown-warning-option)
    target_include_directories(fuzz_${t} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(fuzz_${t} PRIVATE sift)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()
