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

# clustersweep_test(NAME [DEPS...]): a GoogleTest binary from tests/FOLDER/*_test.cc.
function(clustersweep_test name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    CLUSTERSWEEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CLUSTERSWEEP_BINARY="$<TARGET_FILE:clustersweep>")
  add_dependencies(${name} clustersweep)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
