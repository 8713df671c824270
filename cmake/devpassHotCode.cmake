# DEVPASS_HOT_CODE_OPTIONS and devpass_hot_code(target...): compile options added, after the build
# type's flags, to the targets the top-level CMakeLists.txt names as the code the longest tests
# run. Empty by default: every target gets the build type's flags. scripts/test's clang stage
# sets -O1 over an -O0 build, and says why (docs/building.md, "CI stages").
set(DEVPASS_HOT_CODE_OPTIONS "" CACHE STRING "Compile options for the targets the longest tests run (scripts/test's clang stage: -O1)")

function(devpass_hot_code)
  if(NOT DEVPASS_HOT_CODE_OPTIONS)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE ${DEVPASS_HOT_CODE_OPTIONS})
    endif()
  endforeach()
endfunction()
