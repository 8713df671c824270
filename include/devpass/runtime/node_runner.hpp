// devpass/runtime/node_runner.hpp — what each node of a run does: how each op runs (input,
// constant, the copies, delegate and call), how bytes move between devices, when the host waits
// for copies that still read its memory, and the method outputs as tensors. The run loop
// (runtime/executor.hpp) drives it in plan order; graph mode's segments
// (runtime/segment_replay.hpp) record or capture what it issues, and put its values back.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/execute_options.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/opaque_kernel.hpp"
#include "devpass/runtime/profile.hpp"
#include "devpass/runtime/schedule.hpp"
#include "devpass/runtime/staged_kernel.hpp"
#include "devpass/runtime/stream.hpp"
#include "devpass/runtime/tensor.hpp"
#include "devpass/runtime/value_store.hpp"

namespace devpass::runtime {

// An asynchronous copy that may still read host memory: the allocator that queued it and the
// stream it was queued on (the caller's, or null for the allocator's own).
struct pending_host_read {
  device_allocator* allocator = nullptr;
  void* stream = nullptr;
  friend bool operator==(const pending_host_read&, const pending_host_read&) = default;
};

class node_runner {
 public:
  // `arenas`: the planned buffers, allocated. `pending`: copies that may still read host memory,
  // carried from run to run with the arenas. `graph_mode`: every constant comes from the cache,
  // planned or not (filled once, where a replay finds it).
  node_runner(const graph& g, const memory_plan& plan, allocator_registry& allocators, const kernel_registry& kernels,
              std::span<const tensor> inputs, const execute_options& options, std::vector<device_buffer>& arenas,
              std::vector<pending_host_read>& pending, bool graph_mode)
      : g_(g),
        allocators_(allocators),
        kernels_(kernels),
        inputs_(inputs),
        options_(options),
        pending_host_reads_(pending),
        graph_mode_(graph_mode),
        values_(g, plan, allocators, arenas) {}

  // Checks that the inputs given are as many as the method's, and which input node each is.
  void bind_input_order() {
    const std::vector<vertex> ins = method_inputs(g_);
    if (ins.size() != inputs_.size())
      throw graph_error(
          "", "", "inputs",
          "the method has " + std::to_string(ins.size()) + " inputs, " + std::to_string(inputs_.size()) + " given");
    input_index_.assign(boost::num_vertices(g_), -1);
    for (std::size_t i = 0; i < ins.size(); ++i) input_index_[ins[i]] = static_cast<std::int64_t>(i);
  }

  // Runs v, profiled when asked, and counts it.
  void run(vertex v) {
    if (options_.profile == nullptr || capturing_) {
      run_op(v);
    } else {
      const auto start = std::chrono::steady_clock::now();
      run_op(v);
      profile_entry(g_[v].id, profile_label(g_[v]), start);
    }
    ++result_.nodes_run;
  }

  // The method outputs into result().outputs, as tensors where their values live.
  void collect_outputs() {
    const std::vector<value_ref> outs = method_outputs(g_);
    const std::string out_id = output_node(g_) ? g_[*output_node(g_)].id : std::string("output");
    for (std::uint32_t k = 0; k < outs.size(); ++k) {
      const value_ref r = outs[k];
      const slot& s = values_.operand_slot(*output_node(g_), k, r);
      const tensor_spec& spec = spec_of(g_, r);
      const device where = location_of(g_, r);
      tensor t{tensor_spec{spec.type, spec.shape, where, std::nullopt, std::nullopt}, {}};
      if (device_buffer* own = values_.owned_buffer(s)) {
        t.buffer = std::move(*own);  // nobody else needs it now
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

  // The run so far: copies, opaque nodes, nodes run (and the outputs once collected).
  [[nodiscard]] execution_result& result() noexcept { return result_; }
  // Where v's values are; a replay puts them back where its recording left them.
  [[nodiscard]] std::vector<value_slot>& values_of(vertex v) { return values_.values_of(v); }

  // Graph mode: while `s` is set, every copy and kernel issued is appended to it as a step.
  void record_into(schedule* s) noexcept { recording_ = s; }
  // While a CUDA graph is captured (nothing runs): no host fences, no profile entries.
  void set_capturing(bool on) noexcept { capturing_ = on; }

  // `a` queued work that may still read host memory when this returns.
  void note_host_reads(device_allocator& a) {
    const pending_host_read read{&a, stream_for(options_.streams, a.device())};
    if (std::find(pending_host_reads_.begin(), pending_host_reads_.end(), read) == pending_host_reads_.end())
      pending_host_reads_.push_back(read);
  }

  [[nodiscard]] bool profiling() const noexcept { return options_.profile != nullptr; }
  // A profile entry for `id` since `start`; profiling only.
  void profile_entry(const std::string& id, std::string what, std::chrono::steady_clock::time_point start) {
    append_node_time(*options_.profile, allocators_, id, std::move(what), start);
  }

 private:
  using slot = value_slot;

  [[nodiscard]] device_allocator& allocator_of(device d) { return allocators_.find(d); }

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

  // Copies `bytes` from memory on `from` to memory on `to`, whatever the two are.
  // `op`: the copy node, recorded with the step when a segment is being recorded.
  void transfer(std::byte* dst, device to, const std::byte* src, device from, std::uint64_t bytes,
                std::string_view node, const devpass::node* op = nullptr) {
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

  void run_op(vertex v) {
    const node& n = g_[v];
    values_.values_of(v).resize(n.outputs.size());
    switch (n.op) {
      case op_kind::input: bind_input(v); break;
      case op_kind::constant: {
        const device where = location_of(g_, {v, 0});
        // Graph mode takes planned constants from the cache too: filled once, where a replay finds them.
        if (options_.constants && (!n.outputs[0].mem_id || graph_mode_)) {
          slot& s = values_.values_of(v)[0];
          s.data = options_.constants->get(allocator_of(where), n.outputs[0], where, options_.seed, n.id);
          s.produced = true;
          break;
        }
        if (where.is_host()) fence_host_writes();
        fill_on(allocator_of(where), values_.place_output(v, 0), n.outputs[0], options_.seed, n.id);
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
      throw graph_error(
          "", n.id, "device",
          "the input is expected on " + to_string(where) + ", the given tensor is on " + to_string(given.device()));
    if (spec.mem_id) {
      std::byte* dst = values_.place_output(v, 0);
      transfer(dst, where, given.buffer.bytes(), where, spec.byte_size(), n.id);
    } else {
      slot& s = values_.values_of(v)[0];
      s.data = given.buffer.bytes();  // the caller's memory; only read
      s.produced = true;
    }
  }

  void run_copy(vertex v) {
    const node& n = g_[v];
    if (n.arity != 1 || n.outputs.size() != 1)
      throw graph_error("", n.id, "inputs", "a copy reads one value and writes one");
    const value_ref from = operands(g_, v).at(0);
    const slot& src = values_.operand_slot(v, 0, from);
    const tensor_spec& in_spec = spec_of(g_, from);
    if (!in_spec.same_layout(n.outputs[0]))
      throw graph_error("", n.id, "outputs[0]", "a copy's output must have its input's dtype and shape");
    const std::uint64_t bytes = n.outputs[0].byte_size();
    if (n.resident) {
      run_resident_copy(v, src, location_of(g_, from), bytes);
      return;
    }
    std::byte* dst = values_.place_output(v, 0);
    transfer(dst, location_of(g_, {v, 0}), src.data, location_of(g_, from), bytes, n.id, &n);
    copy_stats::direction& d = n.op == op_kind::h2d_copy   ? result_.copies.h2d
                               : n.op == op_kind::d2h_copy ? result_.copies.d2h
                                                           : result_.copies.d2d;
    ++d.count;
    d.bytes += bytes;
  }

  // A resident copy: made once, when the method is loaded. With a constant cache its value is the
  // cache's entry for the constant it copies, on the copy's device: made by this copy the first
  // time, found by every later run (nothing moves). Without one, the run is a load of its own and
  // makes it. Either way it is counted apart from the copies of every execution (copy_stats::load).
  void run_resident_copy(vertex v, const slot& src, device from, std::uint64_t bytes) {
    const node& n = g_[v];
    const device where = location_of(g_, {v, 0});
    const auto load = [&](std::byte* dst) { transfer(dst, where, src.data, from, bytes, n.id); };
    bool made = true;
    if (options_.constants != nullptr) {
      slot& s = values_.values_of(v)[0];
      s.data = options_.constants->get_or_load(allocator_of(where), n.outputs[0], where, options_.seed, constant_of(v),
                                               load, &made);
      s.produced = true;
    } else {
      load(values_.place_output(v, 0));
    }
    if (made) {
      ++result_.copies.load.count;
      result_.copies.load.bytes += bytes;
    }
  }
  // The id of the constant a resident copy's value is: where its chain of resident copies starts.
  [[nodiscard]] const std::string& constant_of(vertex v) const {
    vertex at = v;
    while (g_[at].op != op_kind::constant) {
      if (!g_[at].resident || !is_copy(g_[at].op))
        throw graph_error("", g_[v].id, "resident",
                          "a resident copy is made once, at load: it must copy a constant, not the " +
                              std::string(to_string(g_[at].op)) + " '" + g_[at].id + "'");
      at = operands(g_, at).at(0).producer;
    }
    return g_[at].id;
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
      in[k] = tensor_view{values_.operand_slot(v, k, reads[k]).data, in_specs[k]};
    }
    if (where.is_host()) fence_host_writes();
    for (std::uint32_t k = 0; k < n.outputs.size(); ++k)
      out[k] = tensor_view{values_.place_output(v, k), &n.outputs[k]};

    device_allocator& a = allocator_of(where);
    const kernel_entry* entry = kernels_.find(n, in_specs);
    if (entry == nullptr) result_.opaque_nodes.push_back(n.id);
    const bool on_gpu = !where.is_host() && !a.underlying().emulated();
    if (!on_gpu) {
      // An emulated device passes on the caller's stream handle (null unless one is bound), so a
      // test can see which stream its kernels were issued on; host kernels ignore it.
      void* stream = where.is_host() ? nullptr : a.native_stream();
      if (entry)
        entry->host(kernel_call{n, in, out, stream});
      else
        run_opaque_kernel(n.kernel, in, out);
      if (recording_ != nullptr)
        recording_->steps.push_back(schedule_step{
            .what = schedule_step::kind::kernel, .op = &n, .to = &a, .entry = entry, .inputs = in, .outputs = out});
    } else if (entry && entry->cuda) {
      entry->cuda(kernel_call{n, in, out, a.native_stream()});
    } else {
      run_on_host_copies(n, a, entry, in, out);
    }
  }

  const graph& g_;
  allocator_registry& allocators_;
  const kernel_registry& kernels_;
  std::span<const tensor> inputs_;
  const execute_options& options_;
  std::vector<std::int64_t> input_index_;
  std::vector<pending_host_read>& pending_host_reads_;
  execution_result result_;
  const bool graph_mode_;
  schedule* recording_ = nullptr;  // the segment being recorded, if any
  bool capturing_ = false;         // a CUDA graph is being captured
  // Declared last so its allocations are freed first, while the allocators they came from exist.
  value_store values_;
};

}  // namespace devpass::runtime
