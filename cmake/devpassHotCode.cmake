# DEVPASS_HOT_CODE_OPTIONS and devpass_hot_code(target...): compile options added to the few targets
# whose code the longest tests spend their time in, on top of the build type's flags. scripts/test's
# clang stage builds everything under the sanitizers at -O0, which clang compiles about three
# times faster than -O1, and these targets at -O1, so that the tests run at nearly -O1's speed
# (docs/building.md, "CI stages"). Empty by default: every target gets the build type's flags.
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
