// devpass/runtime/kernels/cuda_kernels.hpp — deprecated path: the CUDA kernels' interface is
// devpass/runtime/cuda/kernels.hpp, with the rest of the CUDA component (issue 30).
#pragma once

#include "devpass/runtime/cuda/kernels.hpp"
