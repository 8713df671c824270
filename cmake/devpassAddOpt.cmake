# devpass_add_opt(<name> POLICY <type> [PHASES <type>...] [HEADERS <header>...])
#
# Builds <name>, an opt-style driver like devpass-opt (every devpass-opt option) with a team's own
# compile-time propagation policy and phases of its own, the way MLIR projects build their own
# *-opt. It writes the driver's main, which includes HEADERS (paths relative to the calling
# directory, or on its include path) and calls
#   devpass::driver::opt_main<POLICY, PHASES...>(argc, argv, "<name>")
# (include/devpass/driver/opt_main.hpp). Each phase adds `--<its name>`. Needs devpass::io (the
# file reader and writer: simdjson). docs/command-line.md, "Your own driver".
function(devpass_add_opt name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "POLICY" "PHASES;HEADERS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "devpass_add_opt(${name}): unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_POLICY)
    message(FATAL_ERROR "devpass_add_opt(${name}): POLICY <type> is required (e.g. devpass::policy_from_options)")
  endif()
  if(NOT TARGET devpass::io)
    message(FATAL_ERROR "devpass_add_opt(${name}): needs devpass::io (find_package(devpass COMPONENTS io), which needs simdjson)")
  endif()
  set(includes "")
  foreach(header IN LISTS arg_HEADERS)
    string(APPEND includes "#include \"${header}\"\n")
  endforeach()
  set(types ${arg_POLICY} ${arg_PHASES})
  list(JOIN types ", " template_arguments)
  # Two TUs, compiled side by side: main, and the propagation it declares
  # (DEVPASS_DECLARE_OPT_PROPAGATION, driver/opt_instrumentation.hpp), so that an edit to the
  # team's phases or to the policy's rules rebuilds one TU of about half the size.
  set(main ${CMAKE_CURRENT_BINARY_DIR}/devpass_add_opt_${name}.cpp)
  set(propagation ${CMAKE_CURRENT_BINARY_DIR}/devpass_add_opt_${name}_propagation.cpp)
  file(GENERATE OUTPUT ${main} CONTENT
"// Written by devpass_add_opt(${name}): an opt-style driver with its own policy and phases.
${includes}#include <devpass/driver/opt_main.hpp>

DEVPASS_DECLARE_OPT_PROPAGATION(${arg_POLICY})

int main(int argc, char** argv) {
  return devpass::driver::opt_main<${template_arguments}>(argc, argv, \"${name}\");
}
")
  file(GENERATE OUTPUT ${propagation} CONTENT
"// Written by devpass_add_opt(${name}): the device propagation its main declares.
${includes}#include <devpass/driver/opt_instrumentation.hpp>
#include <devpass/passes/propagate_device.hpp>

DEVPASS_INSTANTIATE_OPT_PROPAGATION(${arg_POLICY})
")
  add_executable(${name} ${main} ${propagation})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE devpass::io)
  target_compile_features(${name} PRIVATE cxx_std_20)
  if(devpass_VERSION)
    target_compile_definitions(${name} PRIVATE DEVPASS_VERSION="${devpass_VERSION}")
  endif()
endfunction()
