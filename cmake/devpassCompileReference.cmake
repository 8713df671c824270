# The compile-time yardstick (scripts/compile-times, docs/building.md "Compile times"): a TU that
# includes only Boost.Graph's adjacency_list, compiled three times in every build of the tests so
# that each build's .ninja_log carries its own reference, measured under the same load as the
# TUs it is compared with. Never precompiled, never unity-built: it must stay what it says.
set(devpass_reference_tus)
foreach(i RANGE 1 3)
  set(tu ${CMAKE_CURRENT_BINARY_DIR}/compile_reference/compile_reference_${i}.cpp)
  file(CONFIGURE OUTPUT ${tu} CONTENT "// The compile-time reference TU (cmake/devpassCompileReference.cmake).\n#include <boost/graph/adjacency_list.hpp>\n")
  list(APPEND devpass_reference_tus ${tu})
endforeach()
add_library(devpass_compile_reference OBJECT ${devpass_reference_tus})
target_link_libraries(devpass_compile_reference PRIVATE Boost::headers)
target_compile_features(devpass_compile_reference PRIVATE cxx_std_20)
set_target_properties(devpass_compile_reference PROPERTIES DISABLE_PRECOMPILE_HEADERS ON UNITY_BUILD OFF)
