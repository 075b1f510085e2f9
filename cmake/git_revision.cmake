# Writes version.h with the project version and the git revision. The revision is read at build
# time (not only at configure time) so a rebuild after a commit reports the new one.
set(CLUSTERSWEEP_VERSION_IN ${CMAKE_CURRENT_LIST_DIR}/version.h.in)
add_custom_target(clustersweep_version_header
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DIN=${CLUSTERSWEEP_VERSION_IN}
          -DOUT=${PROJECT_BINARY_DIR}/generated/clustersweep/version.h
          -DVERSION=${PROJECT_VERSION}
          -P ${CMAKE_CURRENT_LIST_DIR}/write_version.cmake
  BYPRODUCTS ${PROJECT_BINARY_DIR}/generated/clustersweep/version.h
  COMMENT "Reading the git revision")
add_library(clustersweep_version INTERFACE)
add_dependencies(clustersweep_version clustersweep_version_header)
target_include_directories(clustersweep_version INTERFACE ${PROJECT_BINARY_DIR}/generated)
add_library(clustersweep::version ALIAS clustersweep_version)
