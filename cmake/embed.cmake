# clustersweep_embed(TARGET NAME FILES...) compiles data files into TARGET so the installed binary
# needs no source tree: it generates NAME.cc defining
#   clustersweep::embedded::NAME() -> std::span<const clustersweep::embedded::File>
# where each File has the file's base name and its whole text.
function(clustersweep_embed target name)
  set(out ${PROJECT_BINARY_DIR}/generated/embedded_${name}.cc)
  # Keep the file list one argument: a bare ';' would split it into separate command words.
  string(REPLACE ";" "$<SEMICOLON>" files "${ARGN}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAME=${name} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/write_embed.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/write_embed.cmake
    COMMENT "Embedding ${name} data files"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
