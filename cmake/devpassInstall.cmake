# Install rules and the CMake package (find_package(devpass [COMPONENTS core runtime io cuda])).
# One export set per dependency, so that a consumer asking for the core alone needs Boost alone:
#   devpassCoreTargets  devpass::core, devpass::runtime (and devpass::devpass when built without io)
#   devpassIoTargets    devpass::io, devpass::devpass                       (needs simdjson)
#   devpassCudaTargets  devpass::cuda                                         (needs CUDAToolkit)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(DEVPASS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/devpass)
set(core_targets devpass_core devpass_runtime)
if(DEVPASS_HAS_IO)
  install(TARGETS devpass_io devpass EXPORT devpassIoTargets INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT devpassIoTargets NAMESPACE devpass:: DESTINATION ${DEVPASS_CMAKE_DIR})
else()
  list(APPEND core_targets devpass)
endif()
install(TARGETS ${core_targets} EXPORT devpassCoreTargets INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT devpassCoreTargets NAMESPACE devpass:: DESTINATION ${DEVPASS_CMAKE_DIR})
if(DEVPASS_HAS_CUDA)
  install(TARGETS devpass_cuda EXPORT devpassCudaTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT devpassCudaTargets NAMESPACE devpass:: DESTINATION ${DEVPASS_CMAKE_DIR})
endif()
install(DIRECTORY include/devpass DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
configure_package_config_file(cmake/devpassConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/devpassConfig.cmake
  INSTALL_DESTINATION ${DEVPASS_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/devpassConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/devpassConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/devpassConfigVersion.cmake
  cmake/devpassAddOpt.cmake DESTINATION ${DEVPASS_CMAKE_DIR})
