// devpass/graph/node_outputs.hpp — a node's output values: one spec stored inline, more on the heap.
//
// Most nodes have one output, and every copy a pass makes does; a heap block for it was one of a
// node's few (docs/performance.md#what-each-design-choice-saves). 72 bytes (inline_vector.hpp).
// A std::vector of specs converts implicitly and compares equal, as the member was a std::vector
// before.
#pragma once

#include <algorithm>
#include <vector>

#include "devpass/graph/inline_vector.hpp"
#include "devpass/graph/tensor_spec.hpp"

namespace devpass {

class node_outputs : public inline_vector<tensor_spec, 1> {
  using base = inline_vector<tensor_spec, 1>;

 public:
  using base::base;
  node_outputs() noexcept = default;
  node_outputs(const std::vector<tensor_spec>& specs) : base(specs.begin(), specs.end()) {}  // NOLINT: implicit
  friend bool operator==(const node_outputs& a, const std::vector<tensor_spec>& b) noexcept {
    return std::ranges::equal(a, b);
  }
};

}  // namespace devpass
