# sift_stress's self-test (ctest sift_stress_self_test): plant each known
# defect and require the soak to catch it: a non-zero exit, a FAILED line of
# the right kind naming the key and the seed, and the count in the last line.
# Usage: cmake -DSTRESS=<sift_stress> -DDIR=<work dir> -P self_test.cmake
set(cases
    "drop_acked|lost"
    "stale_value|lost"
    "resurrect|resurrected"
    "phantom|wrong"
    "torn_batch|lost|all or nothing")
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 defect)
  list(GET parts 1 verdict)
  # A third part: text the failure report must hold (which check caught it).
  list(LENGTH parts nparts)
  set(context "")
  if(nparts GREATER 2)
    list(GET parts 2 context)
  endif()
  # A small key space and a few rounds: the defect is planted in the first
  # round that has a key to plant it in.
  execute_process(
    COMMAND ${STRESS} --db ${DIR}/${defect} --rounds 4 --keys 2000
            --threads 2 --seed 7 --plant ${defect}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "--plant ${defect}: exit ${rc}\n${out}${err}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "--plant ${defect}: the soak passed; it must fail")
  endif()
  if(NOT out MATCHES "planted ${defect}")
    message(FATAL_ERROR "--plant ${defect}: nothing was planted")
  endif()
  if(NOT err MATCHES "FAILED \\(${verdict}\\) seed=[0-9]+ key=k[0-9]+")
    message(FATAL_ERROR "--plant ${defect}: no '${verdict}' failure report")
  endif()
  if(NOT context STREQUAL "" AND NOT err MATCHES "${context}")
    message(FATAL_ERROR "--plant ${defect}: no failure from the check '${context}'")
  endif()
  if(NOT out MATCHES "${verdict}=[1-9][0-9]*( |\n|$)")
    message(FATAL_ERROR "--plant ${defect}: ${verdict}=0 in the last line")
  endif()
endforeach()
message(STATUS "every planted defect was caught")
