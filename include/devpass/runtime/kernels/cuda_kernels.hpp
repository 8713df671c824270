// devpass/runtime/kernels/cuda_kernels.hpp — deprecated path: the CUDA kernels' interface is
// devpass/runtime/cuda/kernels.hpp, with the rest of the CUDA component.
#pragma once

#include "devpass/runtime/cuda/kernels.hpp"
