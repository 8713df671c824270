// devpass/runtime/profile.hpp — a profiled run's entries: one wall time per node (or per replayed
// segment), taken once every device has finished the work queued for it.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator_registry.hpp"

namespace devpass::runtime {

// One node's share of a profiled execution.
struct node_time {
  std::string id;
  std::string what;  // the kernel name for delegates and calls, else the op ("h2d_copy", ...)
  double seconds = 0;
};

// What a profile entry calls node `n`: its kernel for delegates and calls, else its op.
[[nodiscard]] inline std::string profile_label(const node& n) {
  return n.op == op_kind::delegate || n.op == op_kind::call ? n.kernel.str() : std::string(to_string(n.op));
}

// Appends `id`'s time since `start`, measured once every device has finished its queued work
// (so the time of that work is the entry's).
inline void append_node_time(std::vector<node_time>& profile, allocator_registry& allocators, const std::string& id,
                             std::string what, std::chrono::steady_clock::time_point start) {
  for (const device d : allocators.devices()) allocators.find(d).synchronize();
  profile.push_back(
      {id, std::move(what), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
}

}  // namespace devpass::runtime
