# tools_tests run the built kvtool binary: build it first and tell the tests
# where it is. Without kvtool (SIFT_BUILD_TOOLS=OFF) the tests skip
# themselves.
if(TARGET tools_tests)
  find_package(nlohmann_json REQUIRED)
  target_link_libraries(tools_tests PRIVATE nlohmann_json::nlohmann_json)
  if(TARGET kvtool)
    add_dependencies(tools_tests kvtool)
    target_compile_definitions(tools_tests PRIVATE
      KVTOOL_PATH="$<TARGET_FILE:kvtool>")
  endif()
endif()
