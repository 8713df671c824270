# devpass::cuda — the CUDA allocator, streams and copies. DEVPASS_ENABLE_CUDA=AUTO builds it when
# find_package(CUDAToolkit) succeeds (a GPU is not needed to build, only to run on one).
set(DEVPASS_HAS_CUDA OFF)
if(NOT DEVPASS_ENABLE_CUDA STREQUAL "OFF")
  if(DEVPASS_ENABLE_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(DEVPASS_HAS_CUDA ON)
    elseif(DEVPASS_ENABLE_CUDA STREQUAL "ON")
      message(FATAL_ERROR "DEVPASS_ENABLE_CUDA=ON but no CUDA compiler was found")
    endif()
  endif()
endif()

if(DEVPASS_HAS_CUDA)
  enable_language(CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  file(GLOB DEVPASS_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cpp)
  add_library(devpass_cuda STATIC ${DEVPASS_CUDA_SOURCES})
  add_library(devpass::cuda ALIAS devpass_cuda)
  set_target_properties(devpass_cuda PROPERTIES EXPORT_NAME cuda POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 20 CXX_STANDARD 20)
  target_include_directories(devpass_cuda PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  # No cuBLAS: its matmuls sum in their own order, and devpass's kernels compute the host
  # kernels' bits. --fmad=false keeps a*b+c two roundings, as on the host (portable_math.hpp).
  target_link_libraries(devpass_cuda PUBLIC CUDA::cudart_static)
  target_compile_options(devpass_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
  target_compile_definitions(devpass_cuda PUBLIC DEVPASS_HAS_CUDA=1)
endif()
message(STATUS "devpass: CUDA part ${DEVPASS_HAS_CUDA}")
