# Compiles SOURCE and succeeds only if compilation fails and its first error line matches the
# regex on the file's first line (`// expect: <regex>`).
file(STRINGS ${SOURCE} first_line LIMIT_COUNT 1)
string(REGEX REPLACE "^// expect: " "" expected "${first_line}")
set(include_flags)
foreach(dir IN LISTS INCLUDES)
  list(APPEND include_flags -I${dir})
endforeach()
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only ${include_flags} ${SOURCE}
  RESULT_VARIABLE result ERROR_VARIABLE diagnostics OUTPUT_VARIABLE out)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not (expected: ${expected})")
endif()
# The FIRST error line must name the mistake (not just some line deep in the instantiation stack).
string(REGEX MATCH "[^\n]*error[^\n]*" first_error "${diagnostics}")
if(NOT first_error MATCHES "${expected}")
  message(FATAL_ERROR "${SOURCE}: the first error is not '${expected}':\n${first_error}\n\nfull diagnostics:\n${diagnostics}")
endif()
message(STATUS "failed to compile as expected: ${expected}")
