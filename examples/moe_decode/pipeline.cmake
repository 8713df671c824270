# The demo's pipeline (examples/moe_decode/pipeline.cpp) compiled once, for the demo and for
# tests/test_moe_decode.cpp: included by tests/ and examples/, defined by whichever comes first.
include_guard(GLOBAL)
add_library(moe_decode_pipeline STATIC ${CMAKE_CURRENT_LIST_DIR}/pipeline.cpp)
target_link_libraries(moe_decode_pipeline PUBLIC devpass::devpass)
if(DEVPASS_HAS_CUDA)
  target_link_libraries(moe_decode_pipeline PUBLIC devpass::cuda)
endif()
