# Precompiled headers for devpass's own programs (docs/building.md, "Compile times"): the
# standard, Boost, simdjson and doctest headers that nearly every TU of the tests, fuzz replays,
# tools, examples, benches and doc snippets parses, compiled once per build instead of once per
# TU. Never devpass's own headers (editing one must rebuild only the TUs that include it), nor the
# compile-time reference TU. The header check uses them (it then shows that each header brings the
# devpass headers it uses); without them (DEVPASS_PRECOMPILE_HEADERS=OFF, the default with
# clang, which scripts/test's clang stage builds) every TU includes what it uses, or fails.
#
#   devpass_precompile_headers(DIRECTORIES dir...)   after those directories are added
#
# Two PCHs, each compiled once in a target of its own and reused by the others (REUSE_FROM):
# with doctest for the targets that link it, without for the rest (doctest's CHECK and friends
# are not macros a tool or benchmark should see).
if(PROJECT_IS_TOP_LEVEL AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(devpass_pch_default ON)
else()
  set(devpass_pch_default OFF)
endif()
option(DEVPASS_PRECOMPILE_HEADERS "Precompile third-party and standard headers for tests, tools, examples, benches (g++, top level)" ${devpass_pch_default})

set(DEVPASS_PCH_HEADERS
  <algorithm> <array> <charconv> <chrono> <cmath> <cstddef> <cstdint> <cstdio> <cstdlib> <cstring>
  <filesystem> <fstream> <functional> <iostream> <map> <memory> <optional> <span> <sstream>
  <stdexcept> <string> <string_view> <type_traits> <unordered_map> <utility> <vector>
  <boost/graph/adjacency_list.hpp> <boost/hana/accessors.hpp> <boost/hana/adapt_struct.hpp>
  <boost/hana/for_each.hpp> <boost/hana/string.hpp>)

function(devpass_precompile_headers)
  cmake_parse_arguments(arg "" "" "DIRECTORIES" ${ARGN})
  if(NOT DEVPASS_PRECOMPILE_HEADERS OR NOT arg_DIRECTORIES)
    return()
  endif()
  set(headers ${DEVPASS_PCH_HEADERS})
  if(DEVPASS_HAS_IO)
    list(APPEND headers <simdjson.h>)
  endif()
  set(donor_dir ${PROJECT_BINARY_DIR}/pch)
  file(CONFIGURE OUTPUT ${donor_dir}/pch.cpp CONTENT "// The TU that compiles the precompiled header (cmake/devpassPrecompiledHeaders.cmake).\n")
  add_library(devpass_pch OBJECT ${donor_dir}/pch.cpp)
  target_link_libraries(devpass_pch PRIVATE devpass::devpass)
  target_precompile_headers(devpass_pch PRIVATE ${headers})
  set(have_doctest FALSE)
  find_package(doctest QUIET)  # imported in tests/ and examples/, not visible here
  if(TARGET doctest::doctest)
    set(have_doctest TRUE)
    add_library(devpass_pch_doctest OBJECT ${donor_dir}/pch.cpp)
    target_link_libraries(devpass_pch_doctest PRIVATE devpass::devpass doctest::doctest)
    target_precompile_headers(devpass_pch_doctest PRIVATE ${headers} <doctest/doctest.h>)
  endif()
  foreach(dir IN LISTS arg_DIRECTORIES)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|OBJECT_LIBRARY)$")
        continue()
      endif()
      get_target_property(disabled ${target} DISABLE_PRECOMPILE_HEADERS)
      get_target_property(options ${target} COMPILE_OPTIONS)
      if(disabled OR "${options}" MATCHES "fsanitize=fuzzer")  # libFuzzer programs: other flags
        continue()
      endif()
      get_target_property(libraries ${target} LINK_LIBRARIES)
      # Only the suites linking the shared doctest main: a TU that configures doctest before
      # including it (DOCTEST_CONFIG_IMPLEMENT..., the main itself, examples/doctest_suite) must
      # not find it included already.
      if(have_doctest AND "${libraries}" MATCHES "devpass_doctest_main")
        target_precompile_headers(${target} REUSE_FROM devpass_pch_doctest)
      else()
        target_precompile_headers(${target} REUSE_FROM devpass_pch)
      endif()
      # A PCH the compiler cannot use is otherwise ignored in silence, and the build is just slow.
      target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Winvalid-pch>)
    endforeach()
  endforeach()
endfunction()
