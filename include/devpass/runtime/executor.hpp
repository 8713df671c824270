// devpass/runtime/executor.hpp — runs a graph after device propagation and memory planning.
//
// execute() allocates one device_buffer per planned buffer on its device, binds the method
// inputs, runs the nodes in plan order and returns the method outputs:
//  - a value with a mem_id lives at `offset` in its arena; a value without one (constants, and
//    inputs or outputs the caller owns on a device) gets its own allocation, or is the caller's
//    input tensor itself;
//  - input: the caller's tensor, which must live where the input's spec says (a host tensor, or a
//    device tensor when propagation skipped the input's h2d copy);
//  - constant: fill_deterministic(seed, node id), on the device it lives on;
//  - h2d_copy / d2h_copy / d2d_copy: a copy through the allocators, counted per direction;
//  - delegate (on its device) and call (on the host): the registry's kernel when one fits the
//    node, its host implementation on the host and on emulated devices, its CUDA one on a GPU
//    (staged through host memory when it has none); else the opaque kernel, and the node is
//    listed in `opaque_nodes`. Every operand must already live where the node runs: a graph that
//    lacks a copy is an error naming the node and slot, never a silent host read.
// Outputs come back where their values live (host tensors, or device tensors when propagation
// skipped their d2h copy); read_to_host() reads any tensor back. An empty plan (no buffers, no
// order) is valid: every value then gets its own allocation, in topological order.
// Errors: graph_error for a graph or plan that does not fit, device_error from the allocators;
// every buffer is freed on every path.
//
// execute_options::streams gives a caller's stream per device (runtime/stream.hpp): that device's
// copies and kernels go to it. execute() still waits for those streams before it returns, as it
// frees its arenas; a prepared_method (runtime/prepared_method.hpp), whose arenas outlive the
// call, does not, and is where graph mode (record or capture once, replay after) lives.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/cuda/cuda_graph.hpp"
#include "devpass/runtime/deterministic.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/opaque_kernel.hpp"
#include "devpass/runtime/schedule.hpp"
#include "devpass/runtime/stream.hpp"

namespace devpass::runtime {

// A tensor that owns its memory: a spec and one buffer on the device the buffer's allocator serves.
struct tensor {
  tensor_spec spec;
  device_buffer buffer;
  [[nodiscard]] devpass::device device() const noexcept { return buffer.device(); }
};

[[nodiscard]] inline std::vector<std::byte> read_to_host(const tensor& t) {
  std::vector<std::byte> bytes(t.spec.byte_size());
  if (bytes.empty()) return bytes;
  device_allocator& a = *t.buffer.allocator();
  if (a.device().is_host()) std::memcpy(bytes.data(), t.buffer.data(), bytes.size());
  else a.copy_device_to_host(bytes.data(), t.buffer.data(), bytes.size());
  return bytes;
}

// Writes host bytes into memory of `a` and waits, so `host` may die on return.
inline void write_from_host(device_allocator& a, void* dst, std::span<const std::byte> host, std::string_view node = {}) {
  if (host.empty()) return;
  if (a.device().is_host()) {
    std::memcpy(dst, host.data(), host.size());
    return;
  }
  a.copy_host_to_device(dst, host.data(), host.size(), node);
  a.synchronize();
}

// fill_deterministic's values in memory of `a` (directly where that memory is host memory).
inline void fill_on(device_allocator& a, void* dst, const tensor_spec& spec, std::uint64_t seed, std::string_view name) {
  if (a.device().is_host() || a.underlying().emulated()) {
    fill_deterministic(dst, spec, seed, name);
    return;
  }
  std::vector<std::byte> host(spec.byte_size());
  fill_deterministic(host.data(), spec, seed, name);
  write_from_host(a, dst, host, name);
}

// A tensor of `spec`'s layout on `where`, filled with fill_deterministic(seed, name).
[[nodiscard]] inline tensor make_deterministic_tensor(allocator_registry& allocators, const tensor_spec& spec,
                                                      devpass::device where, std::uint64_t seed, std::string_view name) {
  device_allocator& a = allocators.find(where);
  tensor t{tensor_spec{spec.type, spec.shape, where, std::nullopt, std::nullopt}, device_buffer(a, spec.byte_size(), 64, name)};
  fill_on(a, t.buffer.data(), t.spec, seed, name);
  return t;
}

// Every device a node runs on or a value lives on, cpu included, sorted, without duplicates.
[[nodiscard]] inline std::vector<device> devices_of(const graph& g) {
  std::vector<device> result{cpu_device};
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].erased) continue;
    result.push_back(g[v].device);
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) result.push_back(location_of(g, {v, k}));
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

// The method inputs (in vertex order), filled from `seed` by node id, each on the device its
// input node's value lives on.
[[nodiscard]] inline std::vector<tensor> make_method_inputs(const graph& g, allocator_registry& allocators, std::uint64_t seed) {
  std::vector<tensor> result;
  for (const vertex v : method_inputs(g))
    result.push_back(make_deterministic_tensor(allocators, g[v].outputs.at(0), location_of(g, {v, 0}), seed, g[v].id));
  return result;
}

// The graph as the host would run it: every node and value on the cpu, no planning.
inline void map_to_host(graph& g) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    g[v].device = cpu_device;
    for (tensor_spec& s : g[v].outputs) {
      s.device.reset();
      s.mem_id.reset();
      s.offset.reset();
    }
  }
}

struct copy_stats {
  struct direction {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
  };
  direction h2d, d2h, d2d;
};

// Constants (weights) materialised once and reused by every execution that is given the cache,
// as a runtime loads weights once rather than per call. Keyed by (node id, device, seed), so one
// cache can serve several methods; it must not outlive the allocators its tensors came from.
class constant_cache {
 public:
  // The constant's memory on `where`, filled from the seed the first time it is asked for.
  std::byte* get(device_allocator& allocator, const tensor_spec& spec, device where, std::uint64_t seed,
                 const std::string& id) {
    auto [it, fresh] = tensors_.try_emplace(key{id, where, seed});
    if (fresh) {
      try {
        it->second = tensor{spec, device_buffer(allocator, spec.byte_size(), 64, id)};
        fill_on(allocator, it->second.buffer.bytes(), spec, seed, id);
      } catch (...) {
        tensors_.erase(it);
        throw;
      }
    } else if (!it->second.spec.same_layout(spec)) {
      throw graph_error("", id, "outputs[0]", "the cached constant has another dtype or shape");
    }
    return it->second.buffer.bytes();
  }
  [[nodiscard]] std::size_t size() const noexcept { return tensors_.size(); }

 private:
  struct key {
    std::string id;
    device where;
    std::uint64_t seed;
    friend auto operator<=>(const key&, const key&) = default;
  };
  std::map<key, tensor> tensors_;
};

// One node's share of a profiled execution.
struct node_time {
  std::string id;
  std::string what;  // the kernel name for delegates and calls, else the op ("h2d_copy", ...)
  double seconds = 0;
};

struct execute_options {
  std::uint64_t seed = 0;              // for constants
  constant_cache* constants = nullptr;  // when given, constants are filled once and reused
  // When given, every node's wall time is appended here, in run order. Profiling waits for every
  // device after each node so the time of its queued work is the node's: it serialises the run.
  std::vector<node_time>* profile = nullptr;
  // The caller's stream per device (none: each allocator's own). See runtime/stream.hpp.
  std::span<const device_stream> streams = {};
};

struct execution_result {
  std::vector<tensor> outputs;            // the method outputs, in order
  copy_stats copies;                      // by copy node kind
  std::vector<std::string> opaque_nodes;  // delegate and call nodes that ran the opaque kernel, in run order
  std::size_t nodes_run = 0;
};

namespace detail {

// Where one value of a run is.
struct value_slot {
  std::byte* data = nullptr;
  bool produced = false;
  std::int64_t owned = -1;  // index into owned_ when the executor allocated this value alone
};

// How a graph-mode method runs one segment of device work (prepared_method decides, once).
enum class segment_mode : std::uint8_t {
  normal,      // node by node, every run
  record,      // emulated devices: the first run records a schedule, later runs replay it
  cuda_graph,  // one real device: the first run captures a CUDA graph (and launches it), later runs launch it
};

struct replay_segment {
  std::vector<vertex> nodes;  // device work, in execution order (the verdict's segment)
  segment_mode mode = segment_mode::normal;
  device_allocator* stream_owner = nullptr;  // cuda_graph: the device whose stream captures and launches
  bool wait_after = false;                   // cuda_graph: the host reads or writes what the graph uses after it
  bool recorded = false;
  schedule steps;                                // record
  std::unique_ptr<cuda::captured_graph> graph;   // cuda_graph
  std::vector<std::vector<value_slot>> slots;    // the nodes' values as the recording run left them
  copy_stats copies;                             // what the segment's copy nodes count per run
  std::vector<std::string> opaque_nodes;
};

// An asynchronous copy that may still read host memory: the allocator that queued it and the
// stream it was queued on (the caller's, or null for the allocator's own).
struct pending_host_read {
  device_allocator* allocator = nullptr;
  void* stream = nullptr;
  friend bool operator==(const pending_host_read&, const pending_host_read&) = default;
};

// What a graph-mode method keeps from run to run.
struct replay_state {
  std::vector<replay_segment> segments;
  std::vector<std::int32_t> segment_of;  // by vertex: the index of the segment it belongs to, or -1
};

inline void add(copy_stats& to, const copy_stats& from) {
  const auto one = [](copy_stats::direction& t, const copy_stats::direction& f) {
    t.count += f.count;
    t.bytes += f.bytes;
  };
  one(to.h2d, from.h2d);
  one(to.d2h, from.d2h);
  one(to.d2d, from.d2d);
}
[[nodiscard]] inline copy_stats difference(const copy_stats& after, const copy_stats& before) {
  const auto one = [](const copy_stats::direction& a, const copy_stats::direction& b) {
    return copy_stats::direction{a.count - b.count, a.bytes - b.bytes};
  };
  return {one(after.h2d, before.h2d), one(after.d2h, before.d2h), one(after.d2d, before.d2d)};
}

// One device_buffer per planned buffer (plan.buffers[1..]) on its device, into `arenas`.
inline void allocate_arenas(const memory_plan& plan, const allocator_registry& allocators, std::vector<device_buffer>& arenas) {
  arenas.clear();
  arenas.resize(plan.buffers.size());
  for (std::size_t i = 1; i < plan.buffers.size(); ++i) {
    const planned_buffer& b = plan.buffers[i];
    if (b.mem_id != static_cast<std::int32_t>(i))
      throw graph_error("", "", "plan.buffers", "buffer " + std::to_string(i) + " has mem_id " + std::to_string(b.mem_id));
    device_allocator& a = allocators.find(b.device);
    try {
      arenas[i] = device_buffer(a, b.size, b.alignment == 0 ? 16 : b.alignment);
    } catch (const device_error& e) {
      throw device_error(e.op(), "", e.device(), "arena mem_id " + std::to_string(i) + ": " + e.detail());
    }
  }
}

class execution {
 public:
  // `arenas` holds the planned buffers: allocated here when it does not hold them yet, else
  // reused (a prepared method's). `pending`: copies that may still read host memory, carried from
  // run to run when the arenas are (a caller's stream is not waited for at the end, so the next
  // run's first host write must wait for the last run's copies out of its host arena).
  // `persistent`: the arenas outlive this run, so devices with a caller's stream are not waited
  // for at the end. `replay`: graph mode's segments, or null.
  execution(const graph& g, const memory_plan& plan, allocator_registry& allocators, const kernel_registry& kernels,
            std::span<const tensor> inputs, const execute_options& options, std::vector<device_buffer>& arenas,
            std::vector<pending_host_read>& pending, replay_state* replay = nullptr, bool persistent = false)
      : g_(g), plan_(plan), allocators_(allocators), kernels_(kernels), inputs_(inputs), options_(options),
        values_(boost::num_vertices(g)), pending_host_reads_(pending), replay_(replay), persistent_(persistent),
        arenas_(arenas) {}

  execution_result run() {
    const stream_binding streams(allocators_, options_.streams);
    if (arenas_.size() != plan_.buffers.size()) allocate_arenas(plan_, allocators_, arenas_);
    bind_input_order();
    const std::vector<vertex> order = plan_.order.empty() ? topological_order(g_) : plan_.order;
    if (replay_ != nullptr) {
      // Inputs and constants first: a method input lives from step 0 (lifetimes.hpp) and graph
      // mode takes every constant from the cache, so neither can clobber a planned value; and
      // neither may sit inside a segment, whose nodes run (or replay) together at its first node.
      for (const vertex v : order) {
        check_live(v);
        if (g_[v].op == op_kind::input || g_[v].op == op_kind::constant) timed(v);
      }
    }
    for (const vertex v : order) {
      check_live(v);
      if (replay_ != nullptr) {
        if (g_[v].op == op_kind::input || g_[v].op == op_kind::constant) continue;
        if (const std::int32_t s = replay_->segment_of[v]; s >= 0) {
          replay_segment& segment = replay_->segments[static_cast<std::size_t>(s)];
          if (segment.mode != segment_mode::normal) {
            if (v == segment.nodes.front()) segment.recorded ? replay(segment) : record(segment);
            continue;  // ran with its segment
          }
        }
      }
      timed(v);
    }
    collect_outputs();
    // A caller's stream orders the caller's use of the results; a run that keeps its buffers
    // does not wait for it. execute() frees its arenas on return, so it waits for every device.
    for (const device d : allocators_.devices())
      if (!persistent_ || stream_for(options_.streams, d) == nullptr) allocators_.find(d).synchronize();
    // Waited for just now: the copies queued on the stream each device was synchronized on.
    std::erase_if(pending_host_reads_, [&](const pending_host_read& r) {
      return stream_for(options_.streams, r.allocator->device()) == r.stream && (!persistent_ || r.stream == nullptr);
    });
    return std::move(result_);
  }

 private:
  using slot = value_slot;

  void check_live(vertex v) const {
    if (v >= boost::num_vertices(g_) || g_[v].erased)
      throw graph_error("", "", "plan.order", "vertex " + std::to_string(v) + " is not a live node");
  }

  [[nodiscard]] static std::string what_of(const node& n) {
    return n.op == op_kind::delegate || n.op == op_kind::call ? n.kernel : std::string(to_string(n.op));
  }

  void profile_entry(const std::string& id, std::string what, std::chrono::steady_clock::time_point start) {
    for (const device d : allocators_.devices()) allocators_.find(d).synchronize();
    options_.profile->push_back(
        {id, std::move(what), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  }

  // Runs v, profiled when asked.
  void timed(vertex v) {
    if (options_.profile == nullptr || capturing_) {
      run_node(v);
    } else {
      const auto start = std::chrono::steady_clock::now();
      run_node(v);
      profile_entry(g_[v].id, what_of(g_[v]), start);
    }
    ++result_.nodes_run;
  }

  // The first run of a replayed segment: its nodes run one by one while their work is recorded
  // (emulated) or captured (CUDA graph, then launched once: a capture runs nothing).
  void record(replay_segment& segment) {
    const copy_stats before = result_.copies;
    const std::size_t opaque_before = result_.opaque_nodes.size();
    if (segment.mode == segment_mode::record) {
      segment.steps.steps.clear();
      recording_ = &segment.steps;
      try {
        for (const vertex v : segment.nodes) timed(v);
      } catch (...) {
        recording_ = nullptr;
        segment.steps.steps.clear();
        throw;
      }
      recording_ = nullptr;
    } else {
      capture(segment);
    }
    segment.slots.clear();
    for (const vertex v : segment.nodes) segment.slots.push_back(values_[v]);
    segment.copies = difference(result_.copies, before);
    segment.opaque_nodes.assign(result_.opaque_nodes.begin() + static_cast<std::ptrdiff_t>(opaque_before),
                                result_.opaque_nodes.end());
    segment.recorded = true;
  }

  void capture([[maybe_unused]] replay_segment& segment) {
#if defined(DEVPASS_HAS_CUDA)
    device_allocator& owner = *segment.stream_owner;
    void* stream = owner.native_stream();
    const auto start = std::chrono::steady_clock::now();
    cuda::begin_capture(stream, owner.device());
    capturing_ = true;
    try {
      for (const vertex v : segment.nodes) timed(v);
      capturing_ = false;
      segment.graph = cuda::end_capture(stream, owner.device());
    } catch (...) {
      capturing_ = false;
      cuda::abort_capture(stream);
      throw;
    }
    segment.graph->launch(stream, owner.device());
    if (segment.wait_after) owner.synchronize();
    else note_host_reads(owner);  // its h2d copies may still read the host arena
    if (options_.profile != nullptr) profile_entry(g_[segment.nodes.front()].id, "graph_capture", start);
#else
    throw std::logic_error("a CUDA graph segment without devpass::cuda");
#endif
  }

  // Later runs: the recorded work again, and the values where the recording left them.
  void replay(replay_segment& segment) {
    const auto start = std::chrono::steady_clock::now();
    if (segment.mode == segment_mode::record) {
      segment.steps.replay();
    } else {
      segment.graph->launch(segment.stream_owner->native_stream(), segment.stream_owner->device());
      if (segment.wait_after) segment.stream_owner->synchronize();
      else note_host_reads(*segment.stream_owner);  // its h2d copies may still read the host arena
    }
    for (std::size_t i = 0; i < segment.nodes.size(); ++i) values_[segment.nodes[i]] = segment.slots[i];
    add(result_.copies, segment.copies);
    result_.opaque_nodes.insert(result_.opaque_nodes.end(), segment.opaque_nodes.begin(), segment.opaque_nodes.end());
    result_.nodes_run += segment.nodes.size();
    if (options_.profile != nullptr) profile_entry(g_[segment.nodes.front()].id, "graph_replay", start);
  }

  void bind_input_order() {
    const std::vector<vertex> ins = method_inputs(g_);
    if (ins.size() != inputs_.size())
      throw graph_error("", "", "inputs",
                        "the method has " + std::to_string(ins.size()) + " inputs, " + std::to_string(inputs_.size()) + " given");
    input_index_.assign(boost::num_vertices(g_), -1);
    for (std::size_t i = 0; i < ins.size(); ++i) input_index_[ins[i]] = static_cast<std::int64_t>(i);
  }

  [[nodiscard]] device_allocator& allocator_of(device d) { return allocators_.find(d); }

  // `a` queued work that may still read host memory when this returns.
  void note_host_reads(device_allocator& a) {
    const pending_host_read read{&a, stream_for(options_.streams, a.device())};
    if (std::find(pending_host_reads_.begin(), pending_host_reads_.end(), read) == pending_host_reads_.end())
      pending_host_reads_.push_back(read);
  }

  // Waits for asynchronous copies that may still read host memory before the host writes any.
  // Not while a CUDA graph is captured: nothing runs then, and its one stream orders the graph's
  // own copies (whoever launches it waits for it before the host touches its memory).
  void fence_host_writes() {
    if (capturing_) return;
    for (const pending_host_read& r : pending_host_reads_) {
      // On the stream the copy was queued on, which a later run may have bound another over.
      void* bound = r.allocator->bind_stream(r.stream);
      try {
        r.allocator->synchronize();
      } catch (...) {
        (void)r.allocator->bind_stream(bound);
        throw;
      }
      (void)r.allocator->bind_stream(bound);
    }
    pending_host_reads_.clear();
  }

  // The memory of output k of v: its arena slice, or an allocation of its own.
  std::byte* place_output(vertex v, std::uint32_t k) {
    const node& n = g_[v];
    const tensor_spec& spec = n.outputs[k];
    const device where = location_of(g_, {v, k});
    slot& s = values_[v][k];
    if (spec.mem_id) {
      const std::string field = "outputs[" + std::to_string(k) + "]";
      const auto id = *spec.mem_id;
      if (id <= 0 || static_cast<std::size_t>(id) >= arenas_.size())
        throw graph_error("", n.id, field + ".mem_id", "no planned buffer " + std::to_string(id));
      if (plan_.buffers[id].device != where)
        throw graph_error("", n.id, field + ".mem_id",
                          "buffer " + std::to_string(id) + " is on " + to_string(plan_.buffers[id].device) +
                              ", the value lives on " + to_string(where));
      const std::int64_t offset = spec.offset.value_or(-1);
      if (offset < 0 || static_cast<std::uint64_t>(offset) > arenas_[id].size() ||
          spec.byte_size() > arenas_[id].size() - static_cast<std::uint64_t>(offset))
        throw graph_error("", n.id, field + ".offset",
                          "offset " + std::to_string(offset) + " + " + std::to_string(spec.byte_size()) +
                              " bytes does not fit buffer " + std::to_string(id) + " of " +
                              std::to_string(arenas_[id].size()) + " bytes");
      s.data = arenas_[id].bytes() + offset;
    } else {
      s.owned = static_cast<std::int64_t>(owned_.size());
      owned_.emplace_back(allocator_of(where), spec.byte_size(), 64, n.id);
      s.data = owned_.back().bytes();
    }
    s.produced = true;
    return s.data;
  }

  [[nodiscard]] const slot& operand_slot(vertex v, std::uint32_t k, value_ref r) const {
    const slot& s = values_[r.producer].at(r.output);
    if (!s.produced)
      throw graph_error("", g_[v].id, "inputs[" + std::to_string(k) + "]",
                        "'" + value_name(g_, r) + "' has not been computed before this node (plan order)");
    return s;
  }

  // Copies `bytes` from memory on `from` to memory on `to`, whatever the two are.
  // `op`: the copy node, recorded with the step when a segment is being recorded.
  void transfer(std::byte* dst, device to, const std::byte* src, device from, std::uint64_t bytes, std::string_view node,
                const devpass::node* op = nullptr) {
    if (bytes == 0) return;
    if (to.is_host()) fence_host_writes();
    schedule_step step{.op = op, .dst = dst, .src = src, .bytes = bytes};
    if (from.is_host() && to.is_host()) {
      step.what = schedule_step::kind::host_copy;
      std::memmove(dst, src, bytes);
    } else if (from.is_host()) {
      device_allocator& a = allocator_of(to);
      step.what = schedule_step::kind::h2d;
      step.to = &a;
      a.copy_host_to_device(dst, src, bytes, node);
      if (!a.underlying().emulated()) note_host_reads(a);
    } else if (to.is_host()) {
      step.what = schedule_step::kind::d2h;
      step.from = &allocator_of(from);
      step.from->copy_device_to_host(dst, src, bytes, node);
    } else {
      step.what = schedule_step::kind::d2d;
      step.to = &allocator_of(to);
      step.from = &allocator_of(from);
      step.to->copy_device_to_device(dst, *step.from, src, bytes, node);
    }
    if (recording_ != nullptr && op != nullptr) recording_->steps.push_back(std::move(step));
  }

  void run_node(vertex v) {
    const node& n = g_[v];
    values_[v].resize(n.outputs.size());
    switch (n.op) {
      case op_kind::input: bind_input(v); break;
      case op_kind::constant: {
        const device where = location_of(g_, {v, 0});
        // Graph mode takes planned constants from the cache too: filled once, where a replay finds them.
        if (options_.constants && (!n.outputs[0].mem_id || replay_ != nullptr)) {
          slot& s = values_[v][0];
          s.data = options_.constants->get(allocator_of(where), n.outputs[0], where, options_.seed, n.id);
          s.produced = true;
          break;
        }
        if (where.is_host()) fence_host_writes();
        fill_on(allocator_of(where), place_output(v, 0), n.outputs[0], options_.seed, n.id);
        break;
      }
      case op_kind::h2d_copy:
      case op_kind::d2h_copy:
      case op_kind::d2d_copy: run_copy(v); break;
      case op_kind::delegate:
      case op_kind::call: run_kernel(v); break;
      case op_kind::output: break;
    }
  }

  void bind_input(vertex v) {
    const node& n = g_[v];
    const tensor& given = inputs_[static_cast<std::size_t>(input_index_[v])];
    const tensor_spec& spec = n.outputs.at(0);
    const device where = location_of(g_, {v, 0});
    if (!given.spec.same_layout(spec))
      throw graph_error("", n.id, "outputs[0]", "the given input does not have the input's dtype and shape");
    if (given.device() != where)
      throw graph_error("", n.id, "device",
                        "the input is expected on " + to_string(where) + ", the given tensor is on " + to_string(given.device()));
    if (spec.mem_id) {
      std::byte* dst = place_output(v, 0);
      transfer(dst, where, given.buffer.bytes(), where, spec.byte_size(), n.id);
    } else {
      slot& s = values_[v][0];
      s.data = given.buffer.bytes();  // the caller's memory; only read
      s.produced = true;
    }
  }

  void run_copy(vertex v) {
    const node& n = g_[v];
    if (n.arity != 1 || n.outputs.size() != 1)
      throw graph_error("", n.id, "inputs", "a copy reads one value and writes one");
    const value_ref from = operands(g_, v).at(0);
    const slot& src = operand_slot(v, 0, from);
    const tensor_spec& in_spec = spec_of(g_, from);
    if (!in_spec.same_layout(n.outputs[0]))
      throw graph_error("", n.id, "outputs[0]", "a copy's output must have its input's dtype and shape");
    std::byte* dst = place_output(v, 0);
    const std::uint64_t bytes = n.outputs[0].byte_size();
    transfer(dst, location_of(g_, {v, 0}), src.data, location_of(g_, from), bytes, n.id, &n);
    copy_stats::direction& d = n.op == op_kind::h2d_copy ? result_.copies.h2d
                               : n.op == op_kind::d2h_copy ? result_.copies.d2h
                                                           : result_.copies.d2d;
    ++d.count;
    d.bytes += bytes;
  }

  void run_kernel(vertex v) {
    const node& n = g_[v];
    const device where = n.op == op_kind::call ? cpu_device : n.device;
    const std::vector<value_ref> reads = operands(g_, v);
    std::vector<tensor_view> in(reads.size()), out(n.outputs.size());
    std::vector<const tensor_spec*> in_specs(reads.size());
    for (std::uint32_t k = 0; k < reads.size(); ++k) {
      const device lives = location_of(g_, reads[k]);
      if (lives != where)
        throw graph_error("", n.id, "inputs[" + std::to_string(k) + "]",
                          "'" + value_name(g_, reads[k]) + "' lives on " + to_string(lives) + ", the node runs on " +
                              to_string(where) + " (a copy is missing)");
      in_specs[k] = &spec_of(g_, reads[k]);
      in[k] = tensor_view{operand_slot(v, k, reads[k]).data, in_specs[k]};
    }
    if (where.is_host()) fence_host_writes();
    for (std::uint32_t k = 0; k < n.outputs.size(); ++k) out[k] = tensor_view{place_output(v, k), &n.outputs[k]};

    device_allocator& a = allocator_of(where);
    const kernel_entry* entry = kernels_.find(n, in_specs);
    if (entry == nullptr) result_.opaque_nodes.push_back(n.id);
    const bool on_gpu = !where.is_host() && !a.underlying().emulated();
    if (!on_gpu) {
      // An emulated device passes on the caller's stream handle (null unless one is bound), so a
      // test can see which stream its kernels were issued on; host kernels ignore it.
      void* stream = where.is_host() ? nullptr : a.native_stream();
      if (entry) entry->host(kernel_call{n, in, out, stream});
      else run_opaque_kernel(n.kernel, in, out);
      if (recording_ != nullptr)
        recording_->steps.push_back(schedule_step{.what = schedule_step::kind::kernel, .op = &n, .to = &a, .entry = entry,
                                                  .inputs = in, .outputs = out});
    } else if (entry && entry->cuda) {
      entry->cuda(kernel_call{n, in, out, a.native_stream()});
    } else {
      run_staged(n, a, entry, in, out);
    }
  }

  // A GPU node without a CUDA implementation: its operands to the host, the host kernel, the
  // results back.
  void run_staged(const node& n, device_allocator& a, const kernel_entry* entry, std::span<const tensor_view> in,
                  std::span<const tensor_view> out) {
    std::vector<std::vector<std::byte>> host_in(in.size()), host_out(out.size());
    std::vector<tensor_view> hin(in.size()), hout(out.size());
    for (std::size_t k = 0; k < in.size(); ++k) {
      host_in[k].resize(in[k].bytes());
      a.copy_device_to_host(host_in[k].data(), in[k].data, in[k].bytes(), n.id);
      hin[k] = tensor_view{host_in[k].data(), in[k].spec};
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
      host_out[k].resize(out[k].bytes());
      hout[k] = tensor_view{host_out[k].data(), out[k].spec};
    }
    if (entry) entry->host(kernel_call{n, hin, hout, nullptr});
    else run_opaque_kernel(n.kernel, hin, hout);
    for (std::size_t k = 0; k < out.size(); ++k) a.copy_host_to_device(out[k].data, host_out[k].data(), out[k].bytes(), n.id);
    a.synchronize();  // host_out dies on return
  }

  void collect_outputs() {
    const std::vector<value_ref> outs = method_outputs(g_);
    const std::string out_id = output_node(g_) ? g_[*output_node(g_)].id : std::string("output");
    for (std::uint32_t k = 0; k < outs.size(); ++k) {
      const value_ref r = outs[k];
      const slot& s = operand_slot(*output_node(g_), k, r);
      const tensor_spec& spec = spec_of(g_, r);
      const device where = location_of(g_, r);
      tensor t{tensor_spec{spec.type, spec.shape, where, std::nullopt, std::nullopt}, {}};
      if (s.owned >= 0 && owned_[static_cast<std::size_t>(s.owned)]) {
        t.buffer = std::move(owned_[static_cast<std::size_t>(s.owned)]);  // nobody else needs it now
      } else {
        t.buffer = device_buffer(allocator_of(where), spec.byte_size(), 64, out_id);
        if (where.is_host()) {
          fence_host_writes();
          if (spec.byte_size() != 0) std::memcpy(t.buffer.data(), s.data, spec.byte_size());
        } else {
          device_allocator& a = allocator_of(where);
          a.copy_device_to_device(t.buffer.data(), a, s.data, spec.byte_size(), out_id);
        }
      }
      result_.outputs.push_back(std::move(t));
    }
  }

  const graph& g_;
  const memory_plan& plan_;
  allocator_registry& allocators_;
  const kernel_registry& kernels_;
  std::span<const tensor> inputs_;
  const execute_options& options_;
  std::vector<std::vector<slot>> values_;
  std::vector<std::int64_t> input_index_;
  std::vector<pending_host_read>& pending_host_reads_;
  execution_result result_;
  replay_state* replay_;
  const bool persistent_;
  schedule* recording_ = nullptr;  // the segment being recorded, if any
  bool capturing_ = false;         // a CUDA graph is being captured
  std::vector<device_buffer>& arenas_;
  // Declared last so they are freed first, while the allocators they came from still exist.
  std::vector<device_buffer> owned_;
};

}  // namespace detail

[[nodiscard]] inline execution_result execute(const graph& g, const memory_plan& plan, allocator_registry& allocators,
                                              const kernel_registry& kernels, std::span<const tensor> inputs,
                                              const execute_options& options = {}) {
  std::vector<device_buffer> arenas;  // outlive the execution, which waits for every device before it ends
  std::vector<detail::pending_host_read> pending;
  return detail::execution(g, plan, allocators, kernels, inputs, options, arenas, pending).run();
}

}  // namespace devpass::runtime
