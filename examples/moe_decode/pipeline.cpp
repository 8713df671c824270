// examples/moe_decode/pipeline.cpp — the demo's pipeline (pipeline.hpp): each method through
// device propagation and memory planning, then prefill and decode on the executor with the
// builtin kernels. Its own TU, linked by the demo and by tests/test_moe_decode.cpp, so that the
// code it instantiates is compiled once and beside main.cpp rather than inside it.
#include "pipeline.hpp"

#include <chrono>
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

namespace moe_decode {

namespace {

// The value a copy chain starts from.
[[nodiscard]] devpass::value_ref copy_origin(const devpass::graph& g, devpass::value_ref v) {
  while (devpass::is_copy(g[v.producer].op)) v = devpass::operand(g, v.producer, 0).value();
  return v;
}
// Is `v` a KV cache: a kv_cache_* method input or the cache output of an attention delegate?
[[nodiscard]] bool is_kv_cache(const devpass::graph& g, devpass::value_ref v) {
  const devpass::node& n = g[v.producer];
  return (n.op == devpass::op_kind::input && n.id.starts_with("kv_cache_")) ||
         (n.kernel == "attention" && v.output == 1);
}
[[nodiscard]] std::uint64_t kv_copy_bytes(const devpass::graph& g) {
  std::uint64_t bytes = 0;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    const devpass::node& n = g[v];
    if (!n.erased && devpass::is_copy(n.op) && is_kv_cache(g, copy_origin(g, devpass::value_ref{v, 0})))
      bytes += n.outputs.at(0).byte_size();
  }
  return bytes;
}

// A tensor of `spec` on `where` holding `host` bytes; counts an upload when `where` is a device.
rt::tensor place(rt::allocator_registry& allocators, const devpass::tensor_spec& spec, devpass::device where,
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
std::int64_t call(const prepared_method& m, rt::allocator_registry& allocators, const rt::kernel_registry& kernels,
                  rt::constant_cache& weights, const std::vector<std::int64_t>& tokens, std::int64_t start,
                  std::vector<rt::tensor>& caches, const run_options& o, call_record& record,
                  std::vector<std::string>& opaque, rt::prepared_method* replay = nullptr) {
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
  add(record.copies.load, result.copies.load);
  record.kv_cache_bytes += m.kv_copy_bytes;
  record.seconds = std::chrono::duration<double>(end - begin).count();
  opaque.insert(opaque.end(), result.opaque_nodes.begin(), result.opaque_nodes.end());
  return token;
}

}  // namespace

prepared_method prepare(devpass::graph g, const run_options& o) {
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

generation generate(const model_config& c, const std::vector<std::int64_t>& prompt, std::size_t new_tokens,
                    const run_options& o) {
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
    // The weights are filled once, and loaded onto the device once (the resident copies the
    // devpass policy makes), and shared by both methods (a runtime loads them once; time per
    // token then measures the decode step, not weight initialisation). Without resident copies
    // every call copies them to the device again.
    rt::constant_cache weights;
    // Zeroed caches on the host; the first call moves them where prefill wants them (not counted:
    // this is the caches' allocation, not a transfer between steps).
    std::vector<rt::tensor> caches;
    const std::vector<std::byte> zeros(c.cache_spec().byte_size());
    for (std::int64_t l = 0; l < c.layers; ++l) {
      const auto input = devpass::find_node(prefill.g, "kv_cache_" + std::to_string(l)).value();
      call_record ignored;
      caches.push_back(place(allocators.registry, c.cache_spec(), devpass::location_of(prefill.g, {input, 0}), zeros,
                             "kv_cache_" + std::to_string(l), ignored));
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
      out.weights_loaded = prefill_graphs->load_copies().load;
      out.weights_loaded.count += decode_graphs->load_copies().load.count;
      out.weights_loaded.bytes += decode_graphs->load_copies().load.bytes;
    }
    std::int64_t token = call(prefill, allocators.registry, kernels, weights, prompt, 0, caches, o, out.prefill,
                              out.opaque_nodes, prefill_graphs.get());
    out.tokens.push_back(token);
    out.weights_loaded.count += out.prefill.copies.load.count;
    out.weights_loaded.bytes += out.prefill.copies.load.bytes;
    for (std::size_t step = 1; step < new_tokens; ++step) {
      call_record record;
      const auto position = static_cast<std::int64_t>(prompt.size() + step - 1);
      token = call(decode, allocators.registry, kernels, weights, {token}, position, caches, o, record,
                   out.opaque_nodes, decode_graphs.get());
      out.tokens.push_back(token);
      out.weights_loaded.count += record.copies.load.count;
      out.weights_loaded.bytes += record.copies.load.bytes;
      out.decode.push_back(record);
    }
  }  // every tensor dies before the allocators
  return out;
}

}  // namespace moe_decode

// main.cpp draws the decode method before and after propagation; it calls the pass through
// passes/propagate_device_fwd.hpp, the declared path, and this TU compiles it
// (docs/device-propagation.md, "Calling it from a compiler's TUs").
DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(devpass::graph)
