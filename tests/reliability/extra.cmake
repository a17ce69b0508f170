# tests/reliability: helper programs and the wiring of reliability_tests.

# The victim of the process-kill campaign (process_kill_test.cc) and the
# journal it shares with the test driver.
add_library(sift_reliability_journal STATIC ${CMAKE_CURRENT_LIST_DIR}/journal.cc)
target_compile_options(sift_reliability_journal PRIVATE ${SIFT_WARNINGS})
target_include_directories(sift_reliability_journal PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(sift_reliability_journal PUBLIC sift)

add_executable(crash_writer ${CMAKE_CURRENT_LIST_DIR}/crash_writer.cc)
target_compile_options(crash_writer PRIVATE ${SIFT_WARNINGS})
target_link_libraries(crash_writer PRIVATE sift_reliability_journal sift)

if(TARGET reliability_tests)
  target_sources(reliability_tests PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/reliability_util.cc
    ${CMAKE_CURRENT_LIST_DIR}/recording_env.cc
    ${CMAKE_CURRENT_LIST_DIR}/workload.cc)
  target_link_libraries(reliability_tests PRIVATE sift_reliability_journal)
  target_compile_definitions(reliability_tests PRIVATE
    SIFT_CRASH_WRITER_PATH="$<TARGET_FILE:crash_writer>")
  add_dependencies(reliability_tests crash_writer)
  # The corruption sweep runs `kvtool verify` on a sample of damaged
  # databases when kvtool is part of the build.
  if(TARGET kvtool)
    target_compile_definitions(reliability_tests PRIVATE
      SIFT_KVTOOL_PATH="$<TARGET_FILE:kvtool>")
    add_dependencies(reliability_tests kvtool)
  endif()
endif()
