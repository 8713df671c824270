// devpass/runtime/execute_options.hpp — what a run of a method (execute(), prepared_method::run)
// is given, and what it gives back: the outputs, the copies per direction, the opaque nodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "devpass/runtime/constant_cache.hpp"
#include "devpass/runtime/profile.hpp"
#include "devpass/runtime/stream.hpp"
#include "devpass/runtime/tensor.hpp"

namespace devpass::runtime {

// The copies a run made: h2d, d2h and d2d are the copies made on every execution, by kind; `load`
// the resident copies it made (copies of constants, made once, when the method is loaded: a run
// given a constant cache that holds them already makes none; a run without a cache makes them all,
// being a load of its own).
struct copy_stats {
  struct direction {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
  };
  direction h2d, d2h, d2d;
  direction load;
};

inline copy_stats& operator+=(copy_stats& to, const copy_stats& from) {
  const auto one = [](copy_stats::direction& t, const copy_stats::direction& f) {
    t.count += f.count;
    t.bytes += f.bytes;
  };
  one(to.h2d, from.h2d);
  one(to.d2h, from.d2h);
  one(to.d2d, from.d2d);
  one(to.load, from.load);
  return to;
}
// The copies counted between two readings of the same counts.
[[nodiscard]] inline copy_stats operator-(const copy_stats& after, const copy_stats& before) {
  const auto one = [](const copy_stats::direction& a, const copy_stats::direction& b) {
    return copy_stats::direction{a.count - b.count, a.bytes - b.bytes};
  };
  return {one(after.h2d, before.h2d), one(after.d2h, before.d2h), one(after.d2d, before.d2d),
          one(after.load, before.load)};
}

struct execute_options {
  std::uint64_t seed = 0;  // for constants
  // When given, constants are filled once and reused, and resident copies made once: later runs
  // given the same cache find them there.
  constant_cache* constants = nullptr;
  // When given, every node's wall time is appended here, in run order. Profiling waits for every
  // device after each node so the time of its queued work is the node's: it serialises the run.
  std::vector<node_time>* profile = nullptr;
  // The caller's stream per device (none: each allocator's own). See runtime/stream.hpp.
  std::span<const device_stream> streams = {};
};

struct execution_result {
  std::vector<tensor> outputs;            // the method outputs, in order
  copy_stats copies;                      // by copy node kind; resident copies made by this run apart
  std::vector<std::string> opaque_nodes;  // delegate and call nodes that ran the opaque kernel, in run order
  std::size_t nodes_run = 0;
};

}  // namespace devpass::runtime
