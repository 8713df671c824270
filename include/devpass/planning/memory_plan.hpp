// devpass/planning/memory_plan.hpp — what memory planning produces and the executor consumes.
//
// Buffer ids follow ExecuTorch: mem_id 0 is reserved (never used), the cpu arena comes first,
// then one arena per device in device order (cuda:0, cuda:1, ...). Each planned value's
// tensor_spec carries `mem_id` and `offset`; values without a mem_id are not in any arena
// (constants and resident copies, and method inputs/outputs the caller owns on a device). What
// the constants hold, loaded once and kept for the method's life, is accounted per device apart
// from the arenas (`resident`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "devpass/graph/device.hpp"
#include "devpass/graph/graph_model.hpp"

namespace devpass {

struct planned_buffer {
  std::int32_t mem_id = 0;
  devpass::device device;
  std::uint64_t size = 0;         // bytes the arena needs
  std::uint64_t lower_bound = 0;  // the most bytes live at any one step (no plan can do better)
  std::uint32_t alignment = 16;   // every offset in this buffer is a multiple of it
};

// The constant values that live on one device (constants, and resident copies of them: loaded
// once, at load, and kept while the method lives), outside its arena.
struct resident_memory {
  devpass::device device;
  std::uint64_t bytes = 0;  // their bytes, unaligned: each is an allocation of its own
  std::size_t values = 0;
  friend bool operator==(const resident_memory&, const resident_memory&) = default;
};

struct memory_plan {
  std::vector<vertex> order;              // execution order the lifetimes were computed on
  std::vector<planned_buffer> buffers;    // buffers[i].mem_id == i; buffers[0] is the reserved slot
  std::vector<resident_memory> resident;  // per device that holds constant values, in device order

  [[nodiscard]] std::size_t buffer_count() const noexcept { return buffers.empty() ? 0 : buffers.size() - 1; }
};

}  // namespace devpass
