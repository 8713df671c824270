// devpass/runtime/schedule.hpp — a resolved schedule: device work with its buffers bound, as a
// graph-mode run records it on emulated devices (what a CUDA graph holds on a real one).
//
//   schedule s;              // the executor appends one step per copy and kernel it issues
//   s.replay();              // issues the same steps again: same kernels, same pointers
//
// A step is what the executor decided for one copy or kernel node: which allocator copies, the
// resolved source and destination pointers and byte count, or the kernel entry (null: the opaque
// kernel) with its operand and result views. Replaying skips everything the executor does per
// node (plan checks, operand lookups, kernel lookup, placement); it issues on the stream bound to
// the allocator at replay time, as a CUDA graph launches on the stream it is given. Steps point
// into the graph (node, specs) and the planned buffers: both must outlive the schedule unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/opaque_kernel.hpp"

namespace devpass::runtime {

struct schedule_step {
  enum class kind : std::uint8_t { host_copy, h2d, d2h, d2d, kernel };
  kind what = kind::kernel;
  const node* op = nullptr;
  // Copies: `to` (h2d, d2d) or `from` (d2h) issues it; a kernel runs on `to`'s device, emulated.
  device_allocator* to = nullptr;
  device_allocator* from = nullptr;
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::uint64_t bytes = 0;
  const kernel_entry* entry = nullptr;  // kernels: the registry's entry, null for the opaque kernel
  std::vector<tensor_view> inputs{}, outputs{};
};

// Issues one step, as the executor issued it when it was recorded.
inline void issue(const schedule_step& s) {
  switch (s.what) {
    case schedule_step::kind::host_copy: std::memmove(s.dst, s.src, s.bytes); break;
    case schedule_step::kind::h2d: s.to->copy_host_to_device(s.dst, s.src, s.bytes, s.op->id); break;
    case schedule_step::kind::d2h: s.from->copy_device_to_host(s.dst, s.src, s.bytes, s.op->id); break;
    case schedule_step::kind::d2d: s.to->copy_device_to_device(s.dst, *s.from, s.src, s.bytes, s.op->id); break;
    case schedule_step::kind::kernel:
      if (s.entry != nullptr)
        s.entry->host(kernel_call{*s.op, s.inputs, s.outputs, s.to->native_stream()});
      else
        run_opaque_kernel(s.op->kernel, s.inputs, s.outputs);
      break;
  }
}

struct schedule {
  std::vector<schedule_step> steps;
  void replay() const {
    for (const schedule_step& s : steps) issue(s);
  }
};

}  // namespace devpass::runtime
