// devpass/runtime/kernels/builtin.hpp — registers devpass's builtin kernels.
//
// Name            inputs (slot order)                                    outputs
// add, mul        a: f32 S, b: f32 S                                     f32 S
// silu, gelu      x: f32 S                                               f32 S
// matmul          a: f32 [m,k] | [B,m,k], b: f32 [k,n] | [B,k,n]         f32 [m,n] | [B,m,n]
// rms_norm        x: f32 [...,d], weight: f32 [d]        {"eps"}         f32 [...,d]
// softmax         x: f32 [...,n]                                         f32 [...,n]
// rotary          x: f32 [t,n], positions: i64 [t]       {"head_dim","theta"}  f32 [t,n]
// attention       q,k,v: f32 [t,n], cache: f32 [2,S,n], positions: i64 [t]  {"head_dim"}
//                                                                        f32 [t,n], f32 [2,S,n]
// embedding       table: f32 [V,d], ids: i64 [t]                         f32 [t,d]
// top_k_routing   logits: f32 [t,E]                      {"k"}           i64 [t,k], f32 [t,k]
// moe_experts     x: f32 [t,d], ids: i64 [t,k], weights: f32 [t,k],
//                 w_gate, w_up: f32 [E,d,f], w_down: f32 [E,f,d]         f32 [t,d]
// argmax          x: f32 [r,n]                                           i64 [r]
// arange          start: i64 [1]                                         i64 [t] (start + i)
//
// Each header beside this one states its kernel's exact semantics. Every entry's `fits` demands
// exactly these dtypes and shapes; anything else falls back to the executor's opaque kernel.
// Where DEVPASS_HAS_CUDA is defined (the program links devpass::cuda), each entry also gets its
// CUDA implementation (builtin_cuda.hpp, src/cuda/kernels_*.cu). A program that registers them from
// several TUs can compile them once: builtin_fwd.hpp.
#pragma once

#include <string_view>
#include <utility>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/arange.hpp"
#include "devpass/runtime/kernels/attention.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"
#include "devpass/runtime/kernels/elementwise.hpp"
#include "devpass/runtime/kernels/embedding.hpp"
#include "devpass/runtime/kernels/matmul.hpp"
#include "devpass/runtime/kernels/moe.hpp"
#include "devpass/runtime/kernels/normalization.hpp"
#include "devpass/runtime/kernels/rotary.hpp"
#include "devpass/runtime/kernels/sampling.hpp"
#if defined(DEVPASS_HAS_CUDA)
#include "devpass/runtime/kernels/builtin_cuda.hpp"
#endif

namespace devpass::runtime::kernels {

template <class Registry>
void register_builtin_kernels(Registry& registry) {
  const auto add = [&](std::string_view name, kernel_entry entry) {
#if defined(DEVPASS_HAS_CUDA)
    entry.cuda = cuda_implementation(name);
#endif
    registry.add(std::string(name), std::move(entry));
  };
  add("add", add_kernel());
  add("mul", mul_kernel());
  add("silu", silu_kernel());
  add("gelu", gelu_kernel());
  add("matmul", matmul_kernel());
  add("rms_norm", rms_norm_kernel());
  add("softmax", softmax_kernel());
  add("rotary", rotary_kernel());
  add("attention", attention_kernel());
  add("embedding", embedding_kernel());
  add("top_k_routing", top_k_routing_kernel());
  add("moe_experts", moe_experts_kernel());
  add("argmax", argmax_kernel());
  add("arange", arange_kernel());
}

}  // namespace devpass::runtime::kernels
