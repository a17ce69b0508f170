# tools_tests run the built kvtool binary: build it first and tell the tests
# where it is.
if(TARGET tools_tests AND TARGET kvtool)
  find_package(nlohmann_json REQUIRED)
  add_dependencies(tools_tests kvtool)
  target_compile_definitions(tools_tests PRIVATE
    KVTOOL_PATH="$<TARGET_FILE:kvtool>")
  target_link_libraries(tools_tests PRIVATE nlohmann_json::nlohmann_json)
endif()
