// devpass/passes/fused_shared_copies.hpp — the devpass policy's insert-shared-copies as one sweep
// over the readers, without the rewrite driver: each node's slots are read once and each slot
// gets the copy its rule in devpass_copy_table gives it (docs/device-propagation.md, "The fused
// devpass path"). The graph it leaves is the one the table leaves under the worklist driver, node
// for node in the same order, and it reports the counters that driver reports for the table,
// matches_tried included: the tries the driver makes and this sweep does not (its retries after
// each rewrite, its visits to the nodes a rewrite touched) are counted, not made.
//
// Why the counts are the driver's (rules/rewrite_driver.hpp). At a node the table's three rules
// are tried in order, each at every slot; the first that applies fires and the node is tried
// again from the first rule. A device delegate tries rules 1 (h2d) and 2 (d2d) at each slot, a
// node that reads on the host rule 3 (d2h), any other node none. So a device delegate's h2d
// slots fire first, in slot order, each after the slots before it (s + 1 tries), then its d2d
// slots, each after every slot under rule 1 (arity + s + 1); a rewired slot reads a copy on the
// right side and never fires again. The visit that finds nothing tries every slot under each of
// its rules. The nodes a rewrite touched are then visited once: the new copy (an h2d copy reads
// on the host, so rule 3 tries its one slot; a d2h or d2d copy tries nothing) and the value's
// producer when the sweep has passed it (each of its slots under its rules; nothing fires there,
// since its own slots were settled and its operands did not change).
//
// The sweep covers nodes that are not erased and, when they read anything under the table, have
// each input slot fed by exactly one in-edge (the driver's operand cache then sees `arity`
// connected slots) and, for a device delegate, value 0 on the delegate's device (else a copy into
// it would be copied again). At the first node it does not cover, it hands the graph to the
// driver, which goes on with its sweep there (apply_options::resume_at): the nodes before it, and
// the copies made, are in the state the driver would have left them in, with nothing to visit.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"
#include "devpass/graph/verify_devices.hpp"
#include "devpass/passes/input_sweep.hpp"
#include "devpass/passes/propagation_phases.hpp"

namespace devpass::propagation {

namespace fused {
// How many of devpass_copy_table's rules node v's consumer pattern and early guard admit: each
// of them tries every slot of v.
template <class G>
std::uint32_t shared_rules_at(const G& g, vertex v, bool skip_d2h_for_method_outputs) {
  if (role_of(g, v) == op_kind::delegate && !node_device(g, v).is_host()) return 2;
  return reads_operands_on_host(g, v, skip_d2h_for_method_outputs) ? 1 : 0;
}

// What the sweep did: the counters and copies of the whole phase, the node where it handed the
// graph to the driver (the number of vertices when it covered every node), and whether it left
// every value marked with where it lives (annotate-devices' work: asked for and every node covered).
struct one_sweep_result {
  phase_result result{};
  vertex handed_over_at = 0;
  bool values_marked = false;
};

// A reader's slots as the sweep reads them: the value and where it lives. On the stack for the
// few slots most nodes have.
class slot_reads {
 public:
  struct slot {
    value_ref value;
    device from;
  };
  // Node v's slots, read from its in-edges; false unless each of its `arity` slots has exactly
  // one. (A bit per slot says which are fed; a node of more slots than bits marks them in place.)
  template <class G>
  bool read(const G& g, vertex v, std::uint32_t arity) {
    constexpr vertex unfed = rules::detail::operand_cache::unconnected;
    if (boost::in_degree(v, g) != arity) return false;
    const bool few = arity <= 64;
    slots_ = arity <= on_stack_.size() ? std::span<slot>(on_stack_).first(arity)
                                       : (on_heap_.resize(arity), std::span<slot>(on_heap_));
    if (!few) std::fill(slots_.begin(), slots_.end(), slot{{unfed, 0}, {}});
    std::uint64_t fed = 0;
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const std::uint32_t s = edge_slot(g, e);
      if (s >= arity || (few ? (fed >> s & 1) != 0 : slots_[s].value.producer != unfed)) return false;
      if (few) fed |= std::uint64_t{1} << s;
      slots_[s].value = value_ref{boost::source(e, g), edge_output(g, e)};
    }
    for (slot& s : slots_) s.from = location_of(g, s.value);
    return true;
  }
  const slot& operator[](std::uint32_t s) const { return slots_[s]; }

 private:
  std::array<slot, 8> on_stack_;
  std::vector<slot> on_heap_;
  std::span<slot> slots_;
};

// Marks node v's values where they live (mark_values_of). `checked`: on a graph the input check
// accepted, where a value a delegate, call or copy produces lives where its producer puts it
// (marked there, if at all), so its mark is written without being read.
template <class G>
void mark_values_where_they_live(G& g, vertex v, bool checked) {
  const std::optional<device> produced =
      checked ? devpass::detail::produces_on(role_of(g, v), node_device(g, v)) : std::nullopt;
  for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k)
    mark_device(g, {v, k}, produced ? *produced : location_of(g, value_ref{v, k}));
}

// The phase: the sweep, then the driver from the first node it does not cover.
//
// With mark_values, it also marks each node's values as it passes the node (each copy comes
// marked from the model's add_copy): where a value lives does not change while copies are
// inserted (nor when round trips are elided after), so this is annotate-devices' result without a
// sweep of its own (docs/performance.md#what-each-design-choice-saves).
template <class G, class Options>
one_sweep_result insert_shared_copies_in_one_sweep(G& g, const Options& o, bool mark_values = false) {
  // Whether propagate_device's input check accepted the graph: a device delegate's value 0 then
  // lives on its device (a delegate's outputs are marked, if at all, on its device), so that is
  // not read again.
  bool checked = false;
  if constexpr (requires { o.input; }) checked = o.input && o.input->finished() && o.input->checks();
  rules::rewrite_context<propagate_options, G, rules::tracing::off> ctx(g, o, rewrite_state_for(g, o));
  rules::rewrite_counters& counted = ctx.counters;
  const std::size_t bound = 4 * (boost::num_vertices(g) + boost::num_edges(g)) + 64;  // the driver's, of the input
  const bool skip_d2h = o.skip_d2h_for_method_outputs;
  slot_reads slots;
  std::array<vertex, 8> touched_few;  // a node's touched producers, while they are few
  std::vector<vertex> touched_by;     // else: the node whose rewrites last touched each
  const vertex n = boost::num_vertices(g);
  room_populator<G> room;
  // The sweep makes one copy per value, kind and device (shared_copy finds any there is first),
  // named after all three: its candidate ids differ from each other.
  ctx.candidate_ids_free = candidates_free<G>(ctx.ids);
  vertex v = 0;
  for (; v < n; ++v) {
    room.step(g);
    if (is_erased(g, v)) break;
    if (mark_values) mark_values_where_they_live(g, v, checked);
    const std::uint32_t rules_here = shared_rules_at(g, v, skip_d2h);
    if (rules_here == 0) continue;  // no rule tries it, whatever its slots
    const std::uint32_t arity = arity_of(g, v);
    if (!slots.read(g, v, arity)) break;
    const device at = node_device(g, v);
    if (rules_here == 2 && !checked && location_of(g, value_ref{v, 0}) != at) break;
    // The producers this node's rewrites touched: the driver visits each once, after the node.
    std::size_t touched = 0;
    const auto first_touch = [&](vertex producer) {
      if (touched <= touched_few.size()) {
        for (std::size_t i = 0; i < touched; ++i)
          if (touched_few[i] == producer) return false;
        if (touched < touched_few.size()) return touched_few[touched++] = producer, true;
        if (touched_by.empty()) touched_by.assign(n, n);  // more than fit: marks from here on
        for (const vertex p : touched_few) touched_by[p] = v;
        ++touched;
      }
      if (touched_by[producer] == v) return false;
      touched_by[producer] = v;
      return true;
    };
    // Slot s fires after `tries` tries at this visit: the copy, the rewiring, and the visits the
    // driver then makes to the new copy and to a producer the sweep has passed.
    const auto fire = [&]<op_kind Kind>(std::uint32_t s, device side, std::size_t tries) {
      const value_ref x = slots[s].value;
      const std::size_t made_before = counted.nodes_added;
      const vertex copy = rules::detail::shared_copy<Kind>(ctx, x, side);
      set_operand(g, v, s, value_ref{copy, 0});
      ctx.revisit.clear();
      ++counted.rewrites;
      counted.matches_tried += tries;
      if (Kind == op_kind::h2d_copy && counted.nodes_added != made_before) ++counted.matches_tried;
      const vertex producer = x.producer;
      if (producer < v && first_touch(producer))  // else the sweep visits it later (or it is v)
        counted.matches_tried += std::size_t{arity_of(g, producer)} * shared_rules_at(g, producer, skip_d2h);
    };
    if (rules_here == 2) {  // a device delegate: rule 1's h2d copies, then rule 2's d2d copies
      for (std::uint32_t s = 0; s < arity; ++s)
        if (slots[s].from.is_host()) fire.template operator()<op_kind::h2d_copy>(s, at, s + 1);
      for (std::uint32_t s = 0; s < arity; ++s)
        if (!slots[s].from.is_host() && slots[s].from != at)
          fire.template operator()<op_kind::d2d_copy>(s, at, arity + s + 1);
    } else {  // a node that reads on the host: rule 3's d2h copies
      for (std::uint32_t s = 0; s < arity; ++s)
        if (!slots[s].from.is_host())
          fire.template operator()<op_kind::d2h_copy>(s, device_of(g, slots[s].value), s + 1);
    }
    counted.matches_tried += std::size_t{arity} * rules_here;  // the visit that finds nothing more
  }
  ctx.candidate_ids_free = false;  // the driver asks the allocator, which then reads the sweep's copies
  if (v < n) (void)rules::apply_rules(devpass_copy_table, ctx, {.bound = bound, .resume_at = v, .sweep_end = n});
  one_sweep_result done;
  done.result = table_result(counted, ctx);
  done.handed_over_at = v;
  done.values_marked = mark_values && v == n;
  return done;
}
}  // namespace fused

// The elision after the devpass policy's copies. Under the executorch policy executorch_copies
// elides (fused, or running elide_round_trips itself).
struct elide_shared_round_trips : elide_round_trips {
  template <class Policy>
  static constexpr bool compiled_in =
      elide_round_trips::compiled_in<Policy>&& for_copy_policy<copy_policy::devpass>::compiled_in<Policy>;
  bool active(const propagate_options& o) const {
    return elide_round_trips::active(o) && o.policy == copy_policy::devpass;
  }
};

// insert-shared-copies, elide-round-trips (when on) and annotate-devices: the devpass policy's
// part of the stock pipeline, one phase reported to the instrumentation as those three.
// insert-shared-copies is one sweep when the policy's fuse_shared_copies knob is on and the run
// is not traced (a trace reports the rules tried), and that sweep also marks the values when the
// instrumentation does not look at the graph between phases, so that annotate-devices has nothing
// left to do when the sweep covered every node; otherwise each runs as in a pipeline that lists
// the three itself.
struct shared_copies : for_copy_policy<copy_policy::devpass> {
  static constexpr std::string_view name = "devpass-copies";
  using expects = type_list<capabilities::devices_assigned>;
  using provides = type_list<capabilities::copies_explicit, capabilities::round_trips_elided>;

  template <class Policy, class G, class Options, class Instrumentation>
  phase_result run_reporting(G& g, const Options& o, Instrumentation& instrumentation) const {
    pipeline::constituent_reporter<phase_result, G, Instrumentation> reported{g, instrumentation};
    bool values_marked = false;
    if constexpr (knobs_of<Policy>().fuse_shared_copies && !requires { o.trace; }) {
      reported.begin(insert_shared_copies::name);
      const fused::one_sweep_result swept =
          fused::insert_shared_copies_in_one_sweep(g, o, !pipeline::inspects_graph(instrumentation));
      reported.end(insert_shared_copies::name, swept.result);
      values_marked = swept.values_marked;
    } else {
      reported.run(insert_shared_copies{}, o);
    }
    // The devpass insertion never makes a round trip: it copies a device value straight to where
    // it is read (a d2d between devices), and only host readers get a d2h. So on a graph that
    // held no copy before the pass there is nothing to elide, and the elision sweep is skipped.
    // Tested: tests/test_propagate_properties.cpp runs the elision table after such runs.
    if constexpr (elide_shared_round_trips::compiled_in<Policy>)
      if (elide_shared_round_trips{}.active(o) && may_hold_copies_before(o)) reported.run(elide_round_trips{}, o);
    if (values_marked)
      reported.done_by_another(annotate_devices::name);
    else
      reported.run(annotate_devices{}, o);
    return reported.total;
  }
};

}  // namespace devpass::propagation
