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
  # A binary's test files share helper names in their anonymous namespaces: no unity build.
  set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)
  target_link_libraries(${name} PRIVATE ${arg_UNPARSED_ARGUMENTS} GTest::gtest GTest::gtest_main)
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
