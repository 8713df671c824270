// devpass/runtime/kernels/builtin_cuda.hpp — the CUDA implementations of the builtin kernels:
// adapters from a kernel_call to the plain launchers in runtime/cuda/kernels.hpp (src/cuda/kernels_*.cu).
// Only meaningful where DEVPASS_HAS_CUDA is defined (the program links devpass::cuda).
#pragma once

#if defined(DEVPASS_HAS_CUDA)
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "devpass/runtime/cuda/kernels.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/attention.hpp"
#include "devpass/runtime/kernels/matmul.hpp"
#include "devpass/runtime/kernels/moe.hpp"
#include "devpass/runtime/kernels/normalization.hpp"
#include "devpass/runtime/kernels/rotary.hpp"

namespace devpass::runtime::kernels {

namespace detail {
// Turns a launch failure into an exception naming the kernel, the node and its device.
inline void check_launch(const kernel_call& c, const char* error) {
  if (error != nullptr)
    throw std::runtime_error("kernel '" + c.op.kernel + "' on node '" + c.op.id + "' (" + to_string(c.op.device) +
                             "): " + error);
}
inline float* f(const tensor_view& t) { return t.as<float>(); }
inline std::int64_t* i64(const tensor_view& t) { return t.as<std::int64_t>(); }
inline std::size_t count(const tensor_view& t) { return static_cast<std::size_t>(t.spec->element_count()); }
}  // namespace detail

// The CUDA implementation of builtin kernel `name`, or an empty function for an unknown name.
[[nodiscard]] inline kernel_fn cuda_implementation(std::string_view name) {
  using namespace detail;
  namespace ck = devpass::cuda::kernels;
  if (name == "add")
    return [](const kernel_call& c) {
      check_launch(c, ck::add_f32(f(c.inputs[0]), f(c.inputs[1]), f(c.outputs[0]), count(c.outputs[0]), c.stream));
    };
  if (name == "mul")
    return [](const kernel_call& c) {
      check_launch(c, ck::mul_f32(f(c.inputs[0]), f(c.inputs[1]), f(c.outputs[0]), count(c.outputs[0]), c.stream));
    };
  if (name == "silu")
    return [](const kernel_call& c) {
      check_launch(c, ck::silu_f32(f(c.inputs[0]), f(c.outputs[0]), count(c.outputs[0]), c.stream));
    };
  if (name == "gelu")
    return [](const kernel_call& c) {
      check_launch(c, ck::gelu_f32(f(c.inputs[0]), f(c.outputs[0]), count(c.outputs[0]), c.stream));
    };
  if (name == "matmul")
    return [](const kernel_call& c) {
      const auto d = matmul_shape(*c.inputs[0].spec, *c.inputs[1].spec);
      check_launch(c,
                   ck::matmul_f32(f(c.inputs[0]), f(c.inputs[1]), f(c.outputs[0]), d.batch, d.m, d.k, d.n, c.stream));
    };
  if (name == "rms_norm")
    return [](const kernel_call& c) {
      const auto d = static_cast<std::size_t>(c.inputs[0].spec->shape.back());
      const auto eps = static_cast<float>(attr_float(c.op, "eps", default_rms_eps));
      check_launch(c, ck::rms_norm_f32(f(c.inputs[0]), f(c.inputs[1]), f(c.outputs[0]), count(c.inputs[0]) / d, d, eps,
                                       c.stream));
    };
  if (name == "softmax")
    return [](const kernel_call& c) {
      const auto n = static_cast<std::size_t>(c.inputs[0].spec->shape.back());
      check_launch(c, ck::softmax_f32(f(c.inputs[0]), f(c.outputs[0]), count(c.inputs[0]) / n, n, c.stream));
    };
  if (name == "rotary")
    return [](const kernel_call& c) {
      const auto& s = c.inputs[0].spec->shape;
      check_launch(
          c, ck::rotary_f32(f(c.inputs[0]), i64(c.inputs[1]), f(c.outputs[0]), static_cast<std::size_t>(s[0]),
                            static_cast<std::size_t>(s[1]), static_cast<std::size_t>(attr_int(c.op, "head_dim", s[1])),
                            attr_float(c.op, "theta", default_rope_theta), c.stream));
    };
  if (name == "attention")
    return [](const kernel_call& c) {
      const auto d = attention_shape(c.op, *c.inputs[0].spec, *c.inputs[3].spec);
      check_launch(c, ck::attention_f32(f(c.inputs[0]), f(c.inputs[1]), f(c.inputs[2]), f(c.inputs[3]),
                                        i64(c.inputs[4]), f(c.outputs[0]), f(c.outputs[1]), d.tokens, d.width,
                                        d.cache_rows, d.head_dim, c.stream));
    };
  if (name == "embedding")
    return [](const kernel_call& c) {
      const auto& table = c.inputs[0].spec->shape;
      check_launch(c,
                   ck::embedding_f32(f(c.inputs[0]), i64(c.inputs[1]), f(c.outputs[0]), count(c.inputs[1]),
                                     static_cast<std::size_t>(table[0]), static_cast<std::size_t>(table[1]), c.stream));
    };
  if (name == "top_k_routing")
    return [](const kernel_call& c) {
      const auto& s = c.inputs[0].spec->shape;
      check_launch(c, ck::top_k_routing_f32(f(c.inputs[0]), i64(c.outputs[0]), f(c.outputs[1]),
                                            static_cast<std::size_t>(s[0]), static_cast<std::size_t>(s[1]),
                                            static_cast<std::size_t>(c.op.outputs[0].shape[1]), c.stream));
    };
  if (name == "moe_experts")
    return [](const kernel_call& c) {
      const auto m = moe_shape(*c.inputs[0].spec, *c.inputs[1].spec, *c.inputs[3].spec);
      check_launch(
          c, ck::moe_experts_f32(f(c.inputs[0]), i64(c.inputs[1]), f(c.inputs[2]), f(c.inputs[3]), f(c.inputs[4]),
                                 f(c.inputs[5]), f(c.outputs[0]), m.tokens, m.d, m.k, m.experts, m.hidden, c.stream));
    };
  if (name == "argmax")
    return [](const kernel_call& c) {
      const auto& s = c.inputs[0].spec->shape;
      check_launch(c, ck::argmax_f32(f(c.inputs[0]), i64(c.outputs[0]), static_cast<std::size_t>(s[0]),
                                     static_cast<std::size_t>(s[1]), c.stream));
    };
  if (name == "arange")
    return [](const kernel_call& c) {
      check_launch(c, ck::arange_i64(i64(c.inputs[0]), i64(c.outputs[0]), count(c.outputs[0]), c.stream));
    };
  return {};
}

}  // namespace devpass::runtime::kernels
#endif
