# The C API's test, compiled as C (C99, no extensions) and linked through
# the same target an embedding C program uses (sift::sift_c).
add_executable(c_api_test ${CMAKE_CURRENT_LIST_DIR}/c_api_test.c)
set_target_properties(c_api_test PROPERTIES
  C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(c_api_test PRIVATE ${SIFT_WARNINGS} -pedantic)
target_link_libraries(c_api_test PRIVATE sift::sift_c)
add_test(NAME c_api COMMAND c_api_test ${CMAKE_CURRENT_BINARY_DIR}/c_api_test_db)
set_tests_properties(c_api PROPERTIES LABELS c TIMEOUT 300)
