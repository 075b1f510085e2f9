# clustersweep_library(FOLDER [DEPS...]): one static library per top-level folder, named
# clustersweep_FOLDER with the alias clustersweep::FOLDER, built from FOLDER/*.cc.
# Headers are included as "FOLDER/name.h" from the repository root.
function(clustersweep_library folder)
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cc)
  add_library(clustersweep_${folder} STATIC ${sources} ${PROJECT_SOURCE_DIR}/${folder}/CMakeLists.txt)
  add_library(clustersweep::${folder} ALIAS clustersweep_${folder})
  set_target_properties(clustersweep_${folder} PROPERTIES LINKER_LANGUAGE CXX)
  target_include_directories(clustersweep_${folder} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(clustersweep_${folder} PUBLIC ${ARGN})
endfunction()

# clustersweep_test_compile(TARGET): how a test binary compiles, for the build's speed (on the
# largest test files, -O1 takes a third off the compile time and the header a quarter of the
# rest; docs/testing.md, "How the build stays fast"):
# - at -O1 whatever the build type: the code under test is the libraries', built as the build
#   type says; the test files only drive it;
# - with the tests' precompiled header: every test file parses GoogleTest's, {fmt}'s and
#   nlohmann-json's headers, which are parsed once, for clustersweep_test_pch, and reused by every
#   test binary (-Winvalid-pch: a binary whose flags stop matching it says so).
function(clustersweep_test_compile target)
  if(NOT TARGET clustersweep_test_pch)
    # An executable, so that the header is compiled as position-independent as the test
    # binaries' code (-fPIE), which a library's would not be.
    add_executable(clustersweep_test_pch ${PROJECT_SOURCE_DIR}/tests/pch.cc)
    target_link_libraries(clustersweep_test_pch PRIVATE GTest::gtest fmt::fmt
                                                        nlohmann_json::nlohmann_json)
    target_compile_options(clustersweep_test_pch PRIVATE -O1)
    target_precompile_headers(clustersweep_test_pch PRIVATE
      <gtest/gtest.h> <fmt/format.h> <nlohmann/json.hpp>
      <algorithm> <cmath> <filesystem> <fstream> <map> <random> <sstream> <string> <vector>)
    set_target_properties(clustersweep_test_pch PROPERTIES UNITY_BUILD OFF)
  endif()
  # A binary's test files share helper names in their anonymous namespaces: no unity build.
  set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
  target_precompile_headers(${target} REUSE_FROM clustersweep_test_pch)
  # With the header precompiled, GCC 12 reports libstdc++'s known false positives on std::string
  # copies (GCC bugs 105329 and 105651) in three test files, as if they were theirs.
  target_compile_options(${target} PRIVATE -O1 -Winvalid-pch
    $<$<CXX_COMPILER_ID:GNU>:-Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread>)
endfunction()

# clustersweep_test(NAME [DEPS...] LABELS label... [GROUP "Suite,Suite=label,label"]...
#                   [FIXTURES fixture...] [LOCK resource] [ENVIRONMENT VAR=value...]): a GoogleTest
# binary from tests/FOLDER/*_test.cc, each of its tests a CTest test with LABELS (`ctest -L unit`,
# docs/testing.md). A GROUP gives its suites other labels instead: the suites of a binary that run
# the built clustersweep under MPI are not unit tests, and a contributor who runs `ctest -L unit`
# wants no sweeps through MPI. FIXTURES, LOCK and ENVIRONMENT apply to every test of the binary.
function(clustersweep_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LOCK" "LABELS;GROUP;FIXTURES;ENVIRONMENT")
  if(NOT arg_LABELS)
    message(FATAL_ERROR "clustersweep_test(${name}): give its LABELS (docs/testing.md)")
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE ${arg_UNPARSED_ARGUMENTS} GTest::gtest GTest::gtest_main)
  clustersweep_test_compile(${name})
  target_compile_definitions(${name} PRIVATE
    CLUSTERSWEEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CLUSTERSWEEP_BINARY="$<TARGET_FILE:clustersweep>")
  add_dependencies(${name} clustersweep)
  # gtest_discover_tests flattens a property's list value (LABELS "a;b" becomes LABELS a b), so
  # list-valued properties are set by a script CTest reads after the discovered tests
  # (TEST_INCLUDE_FILES), on the test list each discovery fills in.
  set(common)
  foreach(property FIXTURES_REQUIRED:FIXTURES RESOURCE_LOCK:LOCK ENVIRONMENT:ENVIRONMENT)
    string(REPLACE ":" ";" pair "${property}")
    list(GET pair 0 ctest_name)
    list(GET pair 1 arg_name)
    if(arg_${arg_name})
      string(APPEND common " ${ctest_name} \"${arg_${arg_name}}\"")
    endif()
  endforeach()
  # One discovery per group, with a gtest filter of its suites; the rest get LABELS. Each group's
  # filter and labels (comma-separated) go in two lists side by side.
  set(filters)
  set(label_sets)
  foreach(group IN LISTS arg_GROUP)
    string(REPLACE "=" ";" parts "${group}")
    list(GET parts 0 suites)
    list(GET parts 1 labels)
    string(REPLACE "," ".*:" filter "${suites}")
    list(APPEND filters "${filter}.*")
    list(APPEND label_sets "${labels}")
  endforeach()
  set(rest "")
  if(filters)
    list(JOIN filters ":" rest)
    set(rest "-${rest}")
  endif()
  list(APPEND filters "${rest}")
  string(REPLACE ";" "," rest_labels "${arg_LABELS}")
  list(APPEND label_sets "${rest_labels}")
  set(index 0)
  foreach(filter labels IN ZIP_LISTS filters label_sets)
    string(REPLACE "," ";" labels "${labels}")
    math(EXPR index "${index} + 1")
    set(list_name ${name}_tests_${index})
    if(filter STREQUAL "")
      gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_LIST ${list_name}
                           PROPERTIES TIMEOUT 600)
    else()
      gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_LIST ${list_name}
                           TEST_FILTER "${filter}" PROPERTIES TIMEOUT 600)
    endif()
    set(script ${CMAKE_CURRENT_BINARY_DIR}/${list_name}_properties.cmake)
    file(WRITE ${script} "if(${list_name})\n  set_tests_properties(\${${list_name}} PROPERTIES "
                         "LABELS \"${labels}\"${common})\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
  endforeach()
endfunction()
