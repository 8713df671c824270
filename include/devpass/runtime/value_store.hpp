// devpass/runtime/value_store.hpp — where each value of a run is: a slice of its planned arena
// (checked against the plan), or an allocation of its own; and whether it has been computed yet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"

namespace devpass::runtime {

// Where one value of a run is.
struct value_slot {
  std::byte* data = nullptr;
  bool produced = false;
  std::int64_t owned = -1;  // index into owned_ when the executor allocated this value alone
};

class value_store {
 public:
  // `arenas`: the planned buffers (plan.buffers[1..]), allocated.
  value_store(const graph& g, const memory_plan& plan, allocator_registry& allocators,
              std::vector<device_buffer>& arenas)
      : g_(g), plan_(plan), allocators_(allocators), arenas_(arenas), values_(boost::num_vertices(g)) {}

  // v's values (one slot per output once v has run).
  [[nodiscard]] std::vector<value_slot>& values_of(vertex v) { return values_[v]; }

  // The memory of output k of v: its arena slice, or an allocation of its own.
  std::byte* place_output(vertex v, std::uint32_t k) {
    const node& n = g_[v];
    const tensor_spec& spec = n.outputs[k];
    const device where = location_of(g_, {v, k});
    value_slot& s = values_[v][k];
    if (spec.mem_id) {
      const std::string field = "outputs[" + std::to_string(k) + "]";
      const auto id = *spec.mem_id;
      if (id <= 0 || static_cast<std::size_t>(id) >= arenas_.size())
        throw graph_error("", n.id, field + ".mem_id", "no planned buffer " + std::to_string(id));
      const auto buffer = static_cast<std::size_t>(id);
      if (plan_.buffers[buffer].device != where)
        throw graph_error("", n.id, field + ".mem_id",
                          "buffer " + std::to_string(id) + " is on " + to_string(plan_.buffers[buffer].device) +
                              ", the value lives on " + to_string(where));
      const std::int64_t offset = spec.offset.value_or(-1);
      if (offset < 0 || static_cast<std::uint64_t>(offset) > arenas_[buffer].size() ||
          spec.byte_size() > arenas_[buffer].size() - static_cast<std::uint64_t>(offset))
        throw graph_error("", n.id, field + ".offset",
                          "offset " + std::to_string(offset) + " + " + std::to_string(spec.byte_size()) +
                              " bytes does not fit buffer " + std::to_string(id) + " of " +
                              std::to_string(arenas_[buffer].size()) + " bytes");
      s.data = arenas_[buffer].bytes() + offset;
    } else {
      s.owned = static_cast<std::int64_t>(owned_.size());
      owned_.emplace_back(allocators_.find(where), spec.byte_size(), 64, n.id);
      s.data = owned_.back().bytes();
    }
    s.produced = true;
    return s.data;
  }

  [[nodiscard]] const value_slot& operand_slot(vertex v, std::uint32_t k, value_ref r) const {
    const value_slot& s = values_[r.producer].at(r.output);
    if (!s.produced)
      throw graph_error("", g_[v].id, "inputs[" + std::to_string(k) + "]",
                        "'" + value_name(g_, r) + "' has not been computed before this node (plan order)");
    return s;
  }

  // The allocation of its own that `s` is (null when it is not one, or was taken already).
  [[nodiscard]] device_buffer* owned_buffer(const value_slot& s) {
    if (s.owned >= 0 && owned_[static_cast<std::size_t>(s.owned)]) return &owned_[static_cast<std::size_t>(s.owned)];
    return nullptr;
  }

 private:
  const graph& g_;
  const memory_plan& plan_;
  allocator_registry& allocators_;
  std::vector<device_buffer>& arenas_;
  std::vector<std::vector<value_slot>> values_;
  // Declared last so they are freed first, while the allocators they came from still exist.
  std::vector<device_buffer> owned_;
};

}  // namespace devpass::runtime
