# Builds tests/consumer against devpass, as an installed package (MODE=install) or as a
# subdirectory (MODE=subdirectory), then runs it.
file(REMOVE_RECURSE ${WORK_DIR})
# CONSUMER: the project to build (default tests/consumer); CONSUMER_ARGS: more -D options for it;
# EXPECT_BUILD_ERROR_TARGET and EXPECT_BUILD_ERROR: a target of it whose build must fail with a
# message containing that text.
if(NOT CONSUMER)
  set(CONSUMER consumer)
endif()
set(consumer_dir ${SOURCE_DIR}/tests/${CONSUMER})
if(MODE STREQUAL "install")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/devpass -G ${GENERATOR}
    -DDEVPASS_BUILD_TESTS=OFF -DDEVPASS_BUILD_EXAMPLES=OFF -DDEVPASS_BUILD_BENCH=OFF -DDEVPASS_BUILD_TOOLS=OFF
    -DDEVPASS_ENABLE_CUDA=OFF -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK_DIR}/devpass COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
  set(extra -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
else()
  # No DEVPASS_ENABLE_CUDA: under add_subdirectory the CUDA part is off unless asked for.
  set(extra -DDEVPASS_SOURCE_DIR=${SOURCE_DIR})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${consumer_dir} -B ${WORK_DIR}/consumer -G ${GENERATOR} ${extra} ${CONSUMER_ARGS}
  COMMAND_ERROR_IS_FATAL ANY OUTPUT_VARIABLE configure_output)
if(MODE STREQUAL "subdirectory" AND NOT configure_output MATCHES "devpass: CUDA part OFF")
  message(FATAL_ERROR "under add_subdirectory the CUDA part must be off unless asked for; configure said:\n${configure_output}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${WORK_DIR}/consumer/consumer COMMAND_ERROR_IS_FATAL ANY)
if(EXPECT_BUILD_ERROR_TARGET)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer --target ${EXPECT_BUILD_ERROR_TARGET}
    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  string(FIND "${output}" "${EXPECT_BUILD_ERROR}" at)
  if(status EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "building ${EXPECT_BUILD_ERROR_TARGET} should fail with \"${EXPECT_BUILD_ERROR}\"; it gave (${status}):\n${output}")
  endif()
endif()
