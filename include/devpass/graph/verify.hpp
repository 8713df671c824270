// devpass/graph/verify.hpp — checks that a graph is well formed, and that its devices agree.
//
//   verify_structure(g)  ids, op arity rules, input slots, edge output indexes, one output node,
//                        acyclicity (see docs/verifier.md for the full list);
//   verify_devices(g)    every consumer reads each operand on the device it runs on, and every
//                        produced value lives where its producer puts it (run after propagation);
//   verify(g)            both.
//
// Laws: a verifier never throws for a bad graph and never stops at the first problem: it reports
// every violation it finds, each a graph_error naming the node and the field. The order is
// deterministic: nodes in vertex order, checks in a fixed order within a node, then the checks
// that concern the whole graph (the output node count, then a cycle).
// verify(g).ok() implies topological_order(g) does not throw and operands(g, v) is complete.
#pragma once

#include <iterator>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify_devices.hpp"
#include "devpass/graph/verify_report.hpp"
#include "devpass/graph/verify_structure.hpp"

namespace devpass {

[[nodiscard]] inline verify_report verify(const graph& g) {
  verify_report r = verify_structure(g);
  verify_report d = verify_devices(g);
  r.problems.insert(r.problems.end(), std::make_move_iterator(d.problems.begin()),
                    std::make_move_iterator(d.problems.end()));
  return r;
}

}  // namespace devpass
