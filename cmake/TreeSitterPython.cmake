# tree-sitter-python comes from the npm registry at configure time, pinned by version
# and checked by SHA-256, and is unpacked into the build tree. Version 0.23.6 is the
# last release with ABI 14, which Debian 12's libtree-sitter (0.20.7) can load.
set(TS_PYTHON_VERSION 0.23.6)
set(TS_PYTHON_SHA256 aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a)
set(TS_PYTHON_DIR ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${TS_PYTHON_VERSION})
set(TS_PYTHON_TGZ ${TS_PYTHON_DIR}/tree-sitter-python-${TS_PYTHON_VERSION}.tgz)

if(NOT EXISTS ${TS_PYTHON_DIR}/package/src/parser.c)
  find_program(NPM_EXECUTABLE npm REQUIRED)
  file(MAKE_DIRECTORY ${TS_PYTHON_DIR})
  if(NOT EXISTS ${TS_PYTHON_TGZ})
    message(STATUS "Fetching tree-sitter-python ${TS_PYTHON_VERSION} with npm pack")
    execute_process(
      COMMAND ${NPM_EXECUTABLE} pack tree-sitter-python@${TS_PYTHON_VERSION} --loglevel=error
      WORKING_DIRECTORY ${TS_PYTHON_DIR}
      RESULT_VARIABLE npm_result OUTPUT_VARIABLE npm_output ERROR_VARIABLE npm_error)
    if(NOT npm_result EQUAL 0 OR NOT EXISTS ${TS_PYTHON_TGZ})
      # npm's own words (a network error, a missing version), not just "failed".
      message(FATAL_ERROR "npm pack tree-sitter-python@${TS_PYTHON_VERSION} failed (exit ${npm_result}):\n"
                          "${npm_error}${npm_output}\nCheck the network and the npm registry, then run the build again.")
    endif()
  endif()
  file(SHA256 ${TS_PYTHON_TGZ} ts_python_actual)
  if(NOT ts_python_actual STREQUAL TS_PYTHON_SHA256)
    file(REMOVE ${TS_PYTHON_TGZ})
    message(FATAL_ERROR "tree-sitter-python tarball checksum mismatch: got ${ts_python_actual}, "
                        "expected ${TS_PYTHON_SHA256}")
  endif()
  file(ARCHIVE_EXTRACT INPUT ${TS_PYTHON_TGZ} DESTINATION ${TS_PYTHON_DIR}
       PATTERNS package/src package/LICENSE)
endif()

add_library(tree_sitter_python STATIC
  ${TS_PYTHON_DIR}/package/src/parser.c
  ${TS_PYTHON_DIR}/package/src/scanner.c)
target_include_directories(tree_sitter_python PRIVATE ${TS_PYTHON_DIR}/package/src)
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
