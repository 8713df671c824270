// devpass/graph/rewrite_counters.hpp — what a rewrite did, counted: the rule driver fills it and
// every pipeline phase reports it. Here, below both rules/ and pipeline/, so that a phase's result
// type does not pull in the rule engine.
#pragma once

#include <cstddef>

namespace devpass {

struct rewrite_counters {
  std::size_t matches_tried = 0;  // root sites a pattern was tried on
  std::size_t rewrites = 0;       // rules applied
  std::size_t nodes_added = 0;
  std::size_t nodes_removed = 0;
  rewrite_counters& operator+=(const rewrite_counters& o) {
    matches_tried += o.matches_tried;
    rewrites += o.rewrites;
    nodes_added += o.nodes_added;
    nodes_removed += o.nodes_removed;
    return *this;
  }
  // What was counted since `before` (counters only grow).
  [[nodiscard]] rewrite_counters since(const rewrite_counters& before) const {
    return {matches_tried - before.matches_tried, rewrites - before.rewrites, nodes_added - before.nodes_added,
            nodes_removed - before.nodes_removed};
  }
};

namespace rules {
using devpass::rewrite_counters;  // where it was first declared
}  // namespace rules

}  // namespace devpass
