// examples/moe_decode/pipeline.hpp — runs the MoE decoder's methods through devpass: device
// propagation, memory planning, the executor; generates tokens greedily and records, per call,
// the copies and bytes per direction, the KV-cache bytes among them, and the time.
//
// The KV caches are method inputs and outputs of both methods. With skip_h2d/skip_d2h the
// executor returns them as device tensors and the next call takes those tensors as they are: the
// cache never leaves the device. Inputs the caller has to place on a device (token ids, start
// position) are uploaded by the caller and counted as h2d copies of that call, so the figures
// cover every byte that crosses between host and device.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/passes/propagate_device.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/executor.hpp"
#include "devpass/runtime/kernels/builtin.hpp"
#include "devpass/runtime/prepared_method.hpp"
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

// The value a copy chain starts from.
[[nodiscard]] inline devpass::value_ref copy_origin(const devpass::graph& g, devpass::value_ref v) {
  while (devpass::is_copy(g[v.producer].op)) v = devpass::operand(g, v.producer, 0).value();
  return v;
}
// Is `v` a KV cache: a kv_cache_* method input or the cache output of an attention delegate?
[[nodiscard]] inline bool is_kv_cache(const devpass::graph& g, devpass::value_ref v) {
  const devpass::node& n = g[v.producer];
  return (n.op == devpass::op_kind::input && n.id.starts_with("kv_cache_")) ||
         (n.kernel == "attention" && v.output == 1);
}
[[nodiscard]] inline std::uint64_t kv_copy_bytes(const devpass::graph& g) {
  std::uint64_t bytes = 0;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    const devpass::node& n = g[v];
    if (!n.erased && devpass::is_copy(n.op) && is_kv_cache(g, copy_origin(g, devpass::value_ref{v, 0})))
      bytes += n.outputs.at(0).byte_size();
  }
  return bytes;
}

[[nodiscard]] inline prepared_method prepare(devpass::graph g, const run_options& o) {
  prepared_method m;
  if (o.host_reference) {
    rt::map_to_host(g);
  } else {
    devpass::propagate_device(g, o.propagation);
    devpass::plan_options planning;
    if (o.plan_device_io) planning.plan_device_method_inputs = planning.plan_device_method_outputs = true;
    m.plan = devpass::plan_memory(g, planning);
  }
  m.kv_copy_bytes = kv_copy_bytes(g);
  m.g = std::move(g);
  return m;
}

struct call_record {
  rt::copy_stats copies;               // executed copy nodes plus the caller's uploads
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
};

namespace detail {

// A tensor of `spec` on `where` holding `host` bytes; counts an upload when `where` is a device.
inline rt::tensor place(rt::allocator_registry& allocators, const devpass::tensor_spec& spec, devpass::device where,
                        const std::vector<std::byte>& host, const std::string& name, call_record& record) {
  rt::device_allocator& a = allocators.find(where);
  rt::tensor t{devpass::tensor_spec{spec.type, spec.shape, where, std::nullopt, std::nullopt},
               rt::device_buffer(a, spec.byte_size(), 64, name)};
  rt::write_from_host(a, t.buffer.data(), host, name);
  if (!where.is_host()) {
    ++record.copies.h2d.count;
    record.copies.h2d.bytes += host.size();
  }
  return t;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// One call of `m`: binds tokens, start and the caches (moving cache tensors that live elsewhere
// than the method expects, and counting that), executes, returns the greedy token.
// `replay`: the method in graph mode (runtime/prepared_method.hpp), or null to execute() it.
inline std::int64_t call(const prepared_method& m, rt::allocator_registry& allocators,
                         const rt::kernel_registry& kernels, rt::constant_cache& weights,
                         const std::vector<std::int64_t>& tokens, std::int64_t start, std::vector<rt::tensor>& caches,
                         const run_options& o, call_record& record, std::vector<std::string>& opaque,
                         rt::prepared_method* replay = nullptr) {
  const auto begin = std::chrono::steady_clock::now();
  std::vector<rt::tensor> inputs;
  for (const devpass::vertex v : devpass::method_inputs(m.g)) {
    const devpass::node& n = m.g[v];
    const devpass::device where = devpass::location_of(m.g, {v, 0});
    if (n.id == "tokens") {
      inputs.push_back(place(allocators, n.outputs[0], where, bytes_of(tokens), n.id, record));
    } else if (n.id == "start") {
      inputs.push_back(
          place(allocators, n.outputs[0], where, bytes_of(std::vector<std::int64_t>{start}), n.id, record));
    } else {
      rt::tensor& cache = caches.at(std::stoul(n.id.substr(std::string_view("kv_cache_").size())));
      if (cache.device() != where) {
        // The previous call left the cache elsewhere: the caller moves it, and that costs.
        const devpass::device from = cache.device();
        const std::vector<std::byte> host = rt::read_to_host(cache);
        std::uint64_t moved = 0;
        if (!from.is_host()) {
          ++record.copies.d2h.count;
          record.copies.d2h.bytes += host.size();
          moved += host.size();
        }
        call_record upload;
        cache = place(allocators, n.outputs[0], where, host, n.id, upload);
        record.copies.h2d.count += upload.copies.h2d.count;
        record.copies.h2d.bytes += upload.copies.h2d.bytes;
        record.kv_cache_bytes += moved + upload.copies.h2d.bytes;
      }
      inputs.push_back(std::move(cache));
    }
  }
  std::vector<rt::node_time>* profile = o.profile ? &record.profile : nullptr;
  rt::execution_result result = replay != nullptr
                                    ? replay->run(inputs, {.profile = profile})
                                    : rt::execute(m.g, m.plan, allocators, kernels, inputs,
                                                  {.seed = o.seed, .constants = &weights, .profile = profile});
  const std::vector<std::byte> next = rt::read_to_host(result.outputs.at(0));
  std::int64_t token = 0;
  std::memcpy(&token, next.data() + next.size() - sizeof token, sizeof token);
  const auto end = std::chrono::steady_clock::now();

  for (std::size_t l = 0; l < caches.size(); ++l) caches[l] = std::move(result.outputs.at(l + 1));
  const auto add = [](rt::copy_stats::direction& to, const rt::copy_stats::direction& from) {
    to.count += from.count;
    to.bytes += from.bytes;
  };
  add(record.copies.h2d, result.copies.h2d);
  add(record.copies.d2h, result.copies.d2h);
  add(record.copies.d2d, result.copies.d2d);
  record.kv_cache_bytes += m.kv_copy_bytes;
  record.seconds = std::chrono::duration<double>(end - begin).count();
  opaque.insert(opaque.end(), result.opaque_nodes.begin(), result.opaque_nodes.end());
  return token;
}

}  // namespace detail

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
[[nodiscard]] inline generation generate(const model_config& c, const std::vector<std::int64_t>& prompt,
                                         std::size_t new_tokens, const run_options& o) {
  if (prompt.empty()) throw devpass::config_error("the prompt is empty");
  if (static_cast<std::int64_t>(prompt.size() + new_tokens) > c.max_seq)
    throw devpass::config_error("prompt + new tokens (" + std::to_string(prompt.size() + new_tokens) +
                                ") exceed the KV cache's " + std::to_string(c.max_seq) + " rows");
  const prepared_method prefill = prepare(build_method(c, "prefill", static_cast<std::int64_t>(prompt.size())), o);
  const prepared_method decode = prepare(build_method(c, "decode", 1), o);

  const std::vector<devpass::device> devices = rt::devices_of(prefill.g);
  rt::default_allocators allocators =
      rt::make_default_allocators(devices, o.allow_cuda && !o.host_reference, o.cache_allocations);
  rt::kernel_registry kernels;
  devpass::runtime::register_builtin_kernels(kernels);

  generation out;
  out.emulated = allocators.emulated;
  out.devices = allocators.describe();
  {
    // The weights are filled once, on their device, and shared by both methods (a runtime loads
    // them once; time per token then measures the decode step, not weight initialisation).
    rt::constant_cache weights;
    // Zeroed caches on the host; the first call moves them where prefill wants them (not counted:
    // this is the caches' allocation, not a transfer between steps).
    std::vector<rt::tensor> caches;
    const std::vector<std::byte> zeros(c.cache_spec().byte_size());
    for (std::int64_t l = 0; l < c.layers; ++l) {
      const auto input = devpass::find_node(prefill.g, "kv_cache_" + std::to_string(l)).value();
      call_record ignored;
      caches.push_back(detail::place(allocators.registry, c.cache_spec(), devpass::location_of(prefill.g, {input, 0}),
                                     zeros, "kv_cache_" + std::to_string(l), ignored));
    }
    // Graph mode: each method prepared once (its arenas kept), recording on its first call.
    std::unique_ptr<rt::prepared_method> prefill_graphs, decode_graphs;
    if (o.graphs != rt::graph_mode::off) {
      const rt::prepare_options prepared{.seed = o.seed, .constants = &weights, .graphs = o.graphs};
      prefill_graphs =
          std::make_unique<rt::prepared_method>(prefill.g, prefill.plan, allocators.registry, kernels, prepared);
      decode_graphs =
          std::make_unique<rt::prepared_method>(decode.g, decode.plan, allocators.registry, kernels, prepared);
      out.replayed_segments = decode_graphs->replayed_segments();
    }
    std::int64_t token = detail::call(prefill, allocators.registry, kernels, weights, prompt, 0, caches, o, out.prefill,
                                      out.opaque_nodes, prefill_graphs.get());
    out.tokens.push_back(token);
    for (std::size_t step = 1; step < new_tokens; ++step) {
      call_record record;
      const auto position = static_cast<std::int64_t>(prompt.size() + step - 1);
      token = detail::call(decode, allocators.registry, kernels, weights, {token}, position, caches, o, record,
                           out.opaque_nodes, decode_graphs.get());
      out.tokens.push_back(token);
      out.decode.push_back(record);
    }
  }  // every tensor dies before the allocators
  return out;
}

}  // namespace moe_decode
