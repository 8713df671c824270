// devpass/runtime/kernels/signature.hpp — the exact-fit checks the builtin kernels share.
//
// A builtin kernel fits a node only when every input and output has exactly the dtype and shape
// the kernel's convention names (no broadcasting, no implicit reshape). Graphs that broadcast,
// batch differently or reshape then fall back to the executor's opaque kernel instead of running
// a kernel on data it does not understand.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace devpass::runtime::kernels {

using input_specs = std::span<const tensor_spec* const>;

// True when `s` exists, has dtype `t` and rank `rank` (a separate name: `is(s, t, {d})` must
// always mean the shape [d], never the rank d).
[[nodiscard]] inline bool has_rank(const tensor_spec* s, dtype t, std::size_t rank) noexcept {
  return s != nullptr && s->type == t && s->shape.size() == rank;
}
// True when `s` has dtype `t` and exactly `shape`.
[[nodiscard]] inline bool is(const tensor_spec* s, dtype t, const tensor_shape& shape) noexcept {
  return s != nullptr && s->type == t && s->shape == shape;
}
// True when the node has exactly `count` inputs and `outputs` outputs.
[[nodiscard]] inline bool arity_is(const node& n, input_specs in, std::size_t count, std::size_t outputs) noexcept {
  return in.size() == count && n.outputs.size() == outputs;
}
// Product of a shape's dimensions from `first` on.
[[nodiscard]] inline std::int64_t elements(std::span<const std::int64_t> shape, std::size_t first = 0) noexcept {
  std::int64_t count = 1;
  for (std::size_t i = first; i < shape.size(); ++i) count *= shape[i];
  return count;
}

}  // namespace devpass::runtime::kernels
