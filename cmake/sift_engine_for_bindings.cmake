# The engine for a language package's module (python/, node/), included by
# their CMakeLists.txt: by default built from this repository as an embedding
# program builds it (libraries only); or, with SIFT_ENGINE_PREFIX (the
# packages' build drivers pass $SIFT_ENGINE_PREFIX), the sift package
# installed there by `cmake --install` from a Release build whose static
# libraries are position-independent, which the module links instead.
# Either way the target sift::sift exists afterwards.
set(SIFT_ENGINE_PREFIX "" CACHE PATH
    "prefix of an installed sift (PIC static libraries) to link instead of building it")
if(SIFT_ENGINE_PREFIX)
  if(NOT "${SIFT_ENGINE_PREFIX}" STREQUAL "${SIFT_ENGINE_PREFIX_FOUND}")
    unset(sift_DIR CACHE)  # the prefix changed: search again
  endif()
  find_package(sift CONFIG REQUIRED PATHS "${SIFT_ENGINE_PREFIX}" NO_DEFAULT_PATH)
  set(SIFT_ENGINE_PREFIX_FOUND "${SIFT_ENGINE_PREFIX}" CACHE INTERNAL "")
else()
  set(SIFT_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(SIFT_BUILD_BENCH OFF CACHE BOOL "" FORCE)
  set(SIFT_BUILD_TOOLS OFF CACHE BOOL "" FORCE)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/.. sift EXCLUDE_FROM_ALL)
endif()
