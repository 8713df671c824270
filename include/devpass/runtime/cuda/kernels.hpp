// devpass/runtime/cuda/kernels.hpp — the CUDA builds of the builtin kernels, behind a
// plain C++ interface (no CUDA headers needed to include it; defined in src/cuda/kernels_*.cu and
// linked from devpass::cuda, so only call these where DEVPASS_HAS_CUDA is defined).
//
// Every function enqueues its work on `stream` (a cudaStream_t; null means the default stream)
// with device pointers, follows the convention of the host kernel of the same name in
// devpass/runtime/kernels/*.hpp, and returns null on success or CUDA's error string for the launch.
// Out-of-range ids and positions cannot throw on a device: they are skipped (see each header).
#pragma once

#include <cstddef>
#include <cstdint>

namespace devpass::cuda::kernels {

using status = const char*;  // null: launched; else cudaGetErrorString of the failure

status add_f32(const float* a, const float* b, float* out, std::size_t n, void* stream);
status mul_f32(const float* a, const float* b, float* out, std::size_t n, void* stream);
status silu_f32(const float* x, float* out, std::size_t n, void* stream);
status gelu_f32(const float* x, float* out, std::size_t n, void* stream);
status matmul_f32(const float* a, const float* b, float* out, std::size_t batch, std::size_t m, std::size_t k,
                  std::size_t n, void* stream);
status rms_norm_f32(const float* x, const float* weight, float* out, std::size_t rows, std::size_t d, float eps,
                    void* stream);
status softmax_f32(const float* x, float* out, std::size_t rows, std::size_t n, void* stream);
status argmax_f32(const float* x, std::int64_t* out, std::size_t rows, std::size_t n, void* stream);
status arange_i64(const std::int64_t* start, std::int64_t* out, std::size_t n, void* stream);
status embedding_f32(const float* table, const std::int64_t* ids, float* out, std::size_t tokens, std::size_t rows,
                     std::size_t d, void* stream);
status rotary_f32(const float* x, const std::int64_t* positions, float* out, std::size_t rows, std::size_t n,
                  std::size_t head_dim, double theta, void* stream);
status attention_f32(const float* q, const float* k, const float* v, const float* cache, const std::int64_t* positions,
                     float* out, float* cache_out, std::size_t tokens, std::size_t width, std::size_t cache_rows,
                     std::size_t head_dim, void* stream);
status top_k_routing_f32(const float* logits, std::int64_t* ids, float* weights, std::size_t rows, std::size_t experts,
                         std::size_t k, void* stream);
status moe_experts_f32(const float* x, const std::int64_t* ids, const float* weights, const float* w_gate,
                       const float* w_up, const float* w_down, float* out, std::size_t tokens, std::size_t d,
                       std::size_t k, std::size_t experts, std::size_t hidden, void* stream);

}  // namespace devpass::cuda::kernels
