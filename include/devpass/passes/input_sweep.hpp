// devpass/passes/input_sweep.hpp — the sweep device propagation starts with, over every live
// node in vertex order: the copies the graph holds before the pass (its census), the seed of
// the rewrite states the phases make nodes with (rewrite_seed_t), and, when copies are enabled,
// the input check (what verify_propagation_input checks, node by node). A graph that fails the
// check is refused, naming the first node and field, before anything changes.
//
// propagate_device gives it to its phases (seeded_options). A phase that reads every node before
// it changes any (the fused executorch plan, fused_executorch_copies.hpp) takes it when it is the
// first to run: it visits each node as it passes it and finishes the sweep before it changes
// anything, so that the graph is read once, not twice. Otherwise propagate_device finishes it
// before the phases run.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/verify_devices.hpp"

namespace devpass::propagation {

template <class G>
class input_sweep {
 public:
  // `check`: run the input check too (copies enabled; ExecuTorch's legacy mode makes none).
  explicit input_sweep(bool check) : check_(check) {}

  // Node v, the next one in vertex order (the nodes before it were visited).
  void visit(const G& g, vertex v) {
    next_ = v + 1;
    if (is_erased(g, v)) return;
    before.add(g, v);
    seed.add(g, v);
    if (check_) devpass::detail::check_propagation_input(report_, g, v, bad_reads_);
  }

  // Visits the nodes not visited yet; then refuses the graph (throws the check's first problem,
  // in vertex order) if the check found any.
  void finish(const G& g) {
    for (vertex v = next_, n = boost::num_vertices(g); v < n; ++v) visit(g, v);
    if (!report_.ok()) throw std::move(report_.problems.front());
    finished_ = true;
  }

  // Whether finish() has run (and accepted the graph).
  [[nodiscard]] bool finished() const { return finished_; }
  // Whether it runs the input check: a graph it accepts then meets verify_propagation_input's
  // preconditions, and one it refuses is refused before any phase changes it.
  [[nodiscard]] bool checks() const { return check_; }

  copy_census before;      // the copies the graph held before the pass
  rewrite_seed_t<G> seed;  // for the rewrite states the phases make

 private:
  bool check_;
  bool finished_ = false;
  vertex next_ = 0;
  verify_report report_;
  std::vector<std::pair<std::uint32_t, std::string>> bad_reads_;  // scratch for check_reads
};

// The input sweep propagate_device left to the phase that gets options `o` (seeded_options): one
// not finished yet, else nullptr.
template <class G, class Options>
input_sweep<G>* input_sweep_left_in(const Options& o) {
  if constexpr (requires { o.input; })
    return o.input && !o.input->finished() ? o.input : nullptr;
  else
    return nullptr;
}

// Whether the graph may have held copies before the pass: false only where a finished input
// sweep counted none.
template <class Options>
bool may_hold_copies_before(const Options& o) {
  if constexpr (requires { o.input; })
    if (o.input && o.input->finished()) return o.input->before.copies() != 0;
  return true;
}

}  // namespace devpass::propagation
