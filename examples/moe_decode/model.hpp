// examples/moe_decode/model.hpp — a small mixture-of-experts transformer decoder as devpass graphs.
//
// One method per call shape: `prefill` over a prompt of t tokens, `decode` for one token. Both
// take (tokens: i64 [t], start: i64 [1], kv_cache_0..kv_cache_{L-1}: f32 [2, max_seq, d_model])
// and return (next: i64 [t], kv_cache_0'..): `next[t-1]` is the greedy next token; the caches are
// method inputs and outputs so they can stay on the device between calls.
//
// Every weight is a `constant` on the host, as an exported model holds them (device propagation
// decides where they live: the devpass policy loads each onto cuda:0 once, a resident copy); every
// op of the model is a delegate on cuda:0 running a builtin kernel (runtime/kernels/builtin.hpp):
//   embedding -> per layer:  attention block  rms_norm, matmul q/k/v, rotary q/k, attention
//                                             (KV cache), matmul out, add (residual)
//                            MoE block        rms_norm, matmul router, top_k_routing,
//                                             moe_experts (SwiGLU experts), add (residual)
//             -> rms_norm -> matmul (LM head)
// and greedy sampling is a host `call` (argmax), as in a real serving pipeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace moe_decode {

// A dense tensor spec; `where` when the value's device is fixed up front.
[[nodiscard]] inline devpass::tensor_spec spec(devpass::dtype type, std::vector<std::int64_t> shape,
                                               std::optional<devpass::device> where = std::nullopt) {
  devpass::tensor_spec s;
  s.type = type;
  s.shape = std::move(shape);
  s.device = where;
  return s;
}

struct model_config {
  std::int64_t vocab = 256;
  std::int64_t d_model = 64;
  std::int64_t heads = 4;
  std::int64_t ffn = 128;  // hidden width of one expert
  std::int64_t experts = 4;
  std::int64_t top_k = 2;
  std::int64_t layers = 2;
  std::int64_t max_seq = 64;  // KV cache rows
  [[nodiscard]] std::int64_t head_dim() const { return d_model / heads; }
  [[nodiscard]] devpass::tensor_spec cache_spec() const { return spec(devpass::dtype::float32, {2, max_seq, d_model}); }
};

// The device every delegate is placed on.
inline constexpr devpass::device model_device = devpass::cuda_device(0);

namespace detail {

class builder {
 public:
  explicit builder(std::string name) { g[boost::graph_bundle].name = std::move(name); }

  devpass::value_ref input(std::string id, devpass::tensor_spec spec) {
    return {devpass::add_node(g, {.id = std::move(id), .op = devpass::op_kind::input, .outputs = {std::move(spec)}}),
            0};
  }
  devpass::value_ref weight(std::string id, std::vector<std::int64_t> shape) {
    return {devpass::add_node(g, {.id = std::move(id),
                                  .op = devpass::op_kind::constant,
                                  .outputs = {spec(devpass::dtype::float32, std::move(shape))}}),
            0};
  }
  devpass::vertex op(devpass::op_kind kind, std::string id, std::string kernel, std::vector<devpass::value_ref> inputs,
                     std::vector<devpass::tensor_spec> outputs, std::string attrs = "") {
    const devpass::device where = kind == devpass::op_kind::delegate ? model_device : devpass::cpu_device;
    const devpass::vertex v = devpass::add_node(g, {.id = std::move(id),
                                                    .op = kind,
                                                    .device = where,
                                                    .kernel = std::move(kernel),
                                                    .outputs = std::move(outputs),
                                                    .attrs = std::move(attrs)});
    for (std::uint32_t i = 0; i < inputs.size(); ++i) devpass::connect(g, inputs[i], v, i);
    return v;
  }
  devpass::value_ref delegate(std::string id, std::string kernel, std::vector<devpass::value_ref> inputs,
                              devpass::tensor_spec output, std::string attrs = "") {
    return {op(devpass::op_kind::delegate, std::move(id), std::move(kernel), std::move(inputs), {std::move(output)},
               std::move(attrs)),
            0};
  }

  devpass::graph g;
};

inline devpass::tensor_spec f32(std::vector<std::int64_t> shape) {
  return spec(devpass::dtype::float32, std::move(shape));
}
inline devpass::tensor_spec i64(std::vector<std::int64_t> shape) {
  return spec(devpass::dtype::int64, std::move(shape));
}

}  // namespace detail

// The method that runs `tokens` positions at once (prefill: the prompt; decode: 1).
[[nodiscard]] inline devpass::graph build_method(const model_config& c, std::string name, std::int64_t tokens) {
  using detail::f32;
  using detail::i64;
  using devpass::op_kind;
  using devpass::value_ref;
  detail::builder b(std::move(name));
  const std::int64_t t = tokens, d = c.d_model;
  const std::string head_dim = R"({"head_dim":)" + std::to_string(c.head_dim()) + "}";

  const value_ref ids = b.input("tokens", i64({t}));
  const value_ref start = b.input("start", i64({1}));
  std::vector<value_ref> caches;
  for (std::int64_t l = 0; l < c.layers; ++l)
    caches.push_back(b.input("kv_cache_" + std::to_string(l), c.cache_spec()));

  const value_ref positions = b.delegate("positions", "arange", {start}, i64({t}));
  value_ref h = b.delegate("embed", "embedding", {b.weight("embed.table", {c.vocab, d}), ids}, f32({t, d}));
  std::vector<value_ref> new_caches;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    // Attention block.
    const value_ref x = b.delegate(p + "attn_norm", "rms_norm", {h, b.weight(p + "attn_norm.w", {d})}, f32({t, d}));
    const value_ref q = b.delegate(p + "q", "matmul", {x, b.weight(p + "wq", {d, d})}, f32({t, d}));
    const value_ref k = b.delegate(p + "k", "matmul", {x, b.weight(p + "wk", {d, d})}, f32({t, d}));
    const value_ref v = b.delegate(p + "v", "matmul", {x, b.weight(p + "wv", {d, d})}, f32({t, d}));
    const value_ref qr = b.delegate(p + "q_rope", "rotary", {q, positions}, f32({t, d}), head_dim);
    const value_ref kr = b.delegate(p + "k_rope", "rotary", {k, positions}, f32({t, d}), head_dim);
    const devpass::vertex attn =
        b.op(op_kind::delegate, p + "attention", "attention",
             {qr, kr, v, caches[static_cast<std::size_t>(l)], positions}, {f32({t, d}), c.cache_spec()}, head_dim);
    new_caches.push_back({attn, 1});
    const value_ref o = b.delegate(p + "attn_out", "matmul", {{attn, 0}, b.weight(p + "wo", {d, d})}, f32({t, d}));
    h = b.delegate(p + "attn_residual", "add", {h, o}, f32({t, d}));
    // MoE block.
    const value_ref y = b.delegate(p + "moe_norm", "rms_norm", {h, b.weight(p + "moe_norm.w", {d})}, f32({t, d}));
    const value_ref logits =
        b.delegate(p + "router", "matmul", {y, b.weight(p + "router.w", {d, c.experts})}, f32({t, c.experts}));
    const devpass::vertex route =
        b.op(op_kind::delegate, p + "route", "top_k_routing", {logits}, {i64({t, c.top_k}), f32({t, c.top_k})},
             R"({"k":)" + std::to_string(c.top_k) + "}");
    const value_ref e = b.delegate(p + "experts", "moe_experts",
                                   {y,
                                    {route, 0},
                                    {route, 1},
                                    b.weight(p + "w_gate", {c.experts, d, c.ffn}),
                                    b.weight(p + "w_up", {c.experts, d, c.ffn}),
                                    b.weight(p + "w_down", {c.experts, c.ffn, d})},
                                   f32({t, d}));
    h = b.delegate(p + "moe_residual", "add", {h, e}, f32({t, d}));
  }
  const value_ref z = b.delegate("final_norm", "rms_norm", {h, b.weight("final_norm.w", {d})}, f32({t, d}));
  const value_ref logits = b.delegate("lm_head", "matmul", {z, b.weight("lm_head.w", {d, c.vocab})}, f32({t, c.vocab}));
  const value_ref next{b.op(op_kind::call, "sample", "argmax", {logits}, {i64({t})}), 0};

  std::vector<value_ref> outputs{next};
  outputs.insert(outputs.end(), new_caches.begin(), new_caches.end());
  b.op(op_kind::output, "out", "", outputs, {});
  return std::move(b.g);
}

}  // namespace moe_decode
