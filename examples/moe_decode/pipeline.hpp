// examples/moe_decode/pipeline.hpp — runs the MoE decoder's methods through devpass: device
// propagation, memory planning, the executor; generates tokens greedily and records, per call,
// the copies and bytes per direction, the KV-cache bytes among them, and the time.
//
// The KV caches are method inputs and outputs of both methods. With skip_h2d/skip_d2h the
// executor returns them as device tensors and the next call takes those tensors as they are: the
// cache never leaves the device. Inputs the caller has to place on a device (token ids, start
// position) are uploaded by the caller and counted as h2d copies of that call, so the figures
// cover every byte that crosses between host and device.
//
// prepare() and generate() are compiled in pipeline.cpp, once for the demo and its test: they
// instantiate the pass, the planner, the kernels and the executor, which main.cpp then only calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/passes/propagate_options.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/deterministic.hpp"
#include "devpass/runtime/execute_options.hpp"
#include "devpass/runtime/prepared_method.hpp"
#include "devpass/runtime/profile.hpp"
#include "model.hpp"

namespace moe_decode {

namespace rt = devpass::runtime;

struct run_options {
  devpass::propagate_options propagation;  // policy, elision, skip flags (applied to each method)
  bool host_reference = false;             // the original graphs with every device mapped to the host
  bool allow_cuda = true;                  // false: emulate cuda:0 even where a GPU is usable
  bool cache_allocations = true;           // false: on a GPU, every arena and output is a fresh cudaMalloc
  bool profile = false;                    // record each node's time (serialises every call)
  bool plan_device_io = false;             // plan device method inputs and outputs into arenas (the verdict's what-if)
  rt::graph_mode graphs = rt::graph_mode::off;  // else: each method records its device work once, then replays it
  std::uint64_t seed = 42;                      // the weights: fill_deterministic(seed, constant id)
};

// The demo's usual configurations.
[[nodiscard]] inline run_options devpass_options() {
  run_options o;
  o.propagation.policy = devpass::copy_policy::devpass;
  o.propagation.skip_h2d_for_method_inputs = o.propagation.skip_d2h_for_method_outputs = true;
  return o;
}
// The devpass policy with its weights copied to the device on every call instead of loaded once
// (propagate_options::resident_constants off: devpass-opt's --no-resident-constants).
[[nodiscard]] inline run_options devpass_weights_every_call_options() {
  run_options o = devpass_options();
  o.propagation.resident_constants = false;
  return o;
}
[[nodiscard]] inline run_options executorch_no_elide_options() {
  run_options o = devpass_options();
  o.propagation.policy = devpass::copy_policy::executorch;
  o.propagation.elide = false;
  return o;
}
[[nodiscard]] inline run_options host_reference_options() {
  run_options o;
  o.host_reference = true;
  o.allow_cuda = false;
  return o;
}

// A method ready to execute.
struct prepared_method {
  devpass::graph g;
  devpass::memory_plan plan;
  std::uint64_t kv_copy_bytes = 0;  // bytes of the copy nodes that move a KV cache, per call
};

// The method's graph through device propagation and memory planning (or, for the host
// reference, every device mapped to the host).
[[nodiscard]] prepared_method prepare(devpass::graph g, const run_options& o);

struct call_record {
  rt::copy_stats copies;               // executed copy nodes plus the caller's uploads; `load`: resident copies made
  std::uint64_t kv_cache_bytes = 0;    // of those, bytes that moved a KV cache
  double seconds = 0;                  // wall time of the call (uploads, execute, reading the token)
  std::vector<rt::node_time> profile;  // per node, when run_options::profile
  [[nodiscard]] std::uint64_t bytes() const { return copies.h2d.bytes + copies.d2h.bytes + copies.d2d.bytes; }
  [[nodiscard]] std::uint64_t count() const { return copies.h2d.count + copies.d2h.count + copies.d2d.count; }
};

struct generation {
  std::vector<std::int64_t> tokens;  // the generated tokens (not the prompt)
  call_record prefill;
  std::vector<call_record> decode;  // one per decode call
  bool emulated = true;
  std::string devices;                    // "devices: cuda" or "devices: emulated (why)"
  std::vector<std::string> opaque_nodes;  // nodes no builtin kernel fitted (expected: none)
  std::size_t replayed_segments = 0;      // graph mode: segments each decode call replays
  // The resident copies made in the whole generation: the weights loaded onto the device once,
  // shared by both methods (none when every call copies them).
  rt::copy_stats::direction weights_loaded;
};

// A deterministic prompt of `length` token ids.
[[nodiscard]] inline std::vector<std::int64_t> make_prompt(const model_config& c, std::size_t length,
                                                           std::uint64_t seed) {
  std::vector<std::int64_t> prompt(length);
  for (std::size_t i = 0; i < length; ++i)
    prompt[i] =
        static_cast<std::int64_t>(rt::mix64(seed * 0x9E3779B97F4A7C15ull + i) % static_cast<std::uint64_t>(c.vocab));
  return prompt;
}

// Prefill over `prompt`, then `new_tokens - 1` decode calls: `new_tokens` greedy tokens in all.
[[nodiscard]] generation generate(const model_config& c, const std::vector<std::int64_t>& prompt,
                                  std::size_t new_tokens, const run_options& o);

}  // namespace moe_decode
