// devpass/runtime/cuda/device_query.hpp — does this process see a usable CUDA device?
// Plain C++ interface to the compiled devpass::cuda target (no CUDA headers needed to include it).
#pragma once

#include <string>

namespace devpass::cuda {

// Number of CUDA devices the runtime can use; 0 when there is no driver or no GPU.
[[nodiscard]] int usable_device_count() noexcept;

// Why there is no usable device (CUDA's error string), or empty when there is one.
[[nodiscard]] std::string unavailable_reason();

}  // namespace devpass::cuda
