include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(DEVPASS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/devpass)
set(devpass_targets devpass)
if(DEVPASS_HAS_CUDA)
  list(APPEND devpass_targets devpass_cuda)
endif()
install(TARGETS ${devpass_targets} EXPORT devpassTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/devpass DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT devpassTargets NAMESPACE devpass:: DESTINATION ${DEVPASS_CMAKE_DIR})
configure_package_config_file(cmake/devpassConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/devpassConfig.cmake
  INSTALL_DESTINATION ${DEVPASS_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/devpassConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/devpassConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/devpassConfigVersion.cmake
  DESTINATION ${DEVPASS_CMAKE_DIR})
