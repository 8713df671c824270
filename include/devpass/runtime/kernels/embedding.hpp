// devpass/runtime/kernels/embedding.hpp — embedding lookup (gather rows by int64 ids).
//
// Convention: embedding (table: f32 [V, d], ids: i64 [t]) -> f32 [t, d]; out[i] = table[ids[i]].
// The operand order is torch.nn.functional.embedding's (weight first). An id outside [0, V) is an
// error naming the node (host) or gives a zero row (CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

// Precondition: every id is in [0, rows).
inline void embedding_f32(const float* table, const std::int64_t* ids, float* out, std::size_t tokens,
                          std::size_t d) noexcept {
  for (std::size_t i = 0; i < tokens; ++i)
    std::memcpy(out + i * d, table + static_cast<std::size_t>(ids[i]) * d, d * sizeof(float));
}

[[nodiscard]] inline bool embedding_fits(const node& n, input_specs in) {
  return arity_is(n, in, 2, 1) && has_rank(in[0], dtype::float32, 2) && has_rank(in[1], dtype::int64, 1) &&
         is(&n.outputs[0], dtype::float32, {in[1]->shape[0], in[0]->shape[1]});
}

[[nodiscard]] inline kernel_entry embedding_kernel() {
  return {embedding_fits,
          [](const kernel_call& c) {
            const auto& table = *c.inputs[0].spec;
            const auto tokens = static_cast<std::size_t>(c.inputs[1].spec->shape[0]);
            const auto* ids = c.inputs[1].as<const std::int64_t>();
            for (std::size_t i = 0; i < tokens; ++i)
              if (ids[i] < 0 || ids[i] >= table.shape[0])
                throw graph_error("", c.op.id, "inputs[1]",
                                  "id " + std::to_string(ids[i]) + " is outside the table's " +
                                      std::to_string(table.shape[0]) + " rows");
            embedding_f32(c.inputs[0].as<const float>(), ids, c.outputs[0].as<float>(), tokens,
                          static_cast<std::size_t>(table.shape[1]));
          },
          {}};
}

}  // namespace devpass::runtime::kernels
