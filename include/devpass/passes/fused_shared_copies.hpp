// devpass/passes/fused_shared_copies.hpp — the devpass policy's insert-shared-copies without the
// rewrite driver: a plan, one read-only sweep that reads each node's slots once and lists the copy
// its rule in devpass_copy_table gives each slot, then the making, which makes the listed copies
// in that order (docs/device-propagation.md, "The fused devpass path"). The graph it leaves is the
// one the table leaves under the worklist driver, node for node in the same order, and it reports
// the counters that driver reports for the table, matches_tried included: the tries the driver
// makes and this path does not (its retries after each rewrite, its visits to the nodes a rewrite
// touched) are counted, not made.
//
// Why plan first: nothing changes until the plan has read every node, so the plan's sweep also
// visits each node for propagate_device's input sweep (input_sweep.hpp), which is finished, and
// may refuse the graph, before the first copy is made: the graph is read once, and a refused
// graph is left as it was given.
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
// producer when the driver's sweep has passed it (each of its slots under its rules; nothing
// fires there, since its own slots were settled and its operands did not change).
//
// The plan covers nodes that are not erased and, when they read anything under the table, have
// each input slot fed by exactly one in-edge (the driver's operand cache then sees `arity`
// connected slots) and, for a device delegate, value 0 on the delegate's device (else a copy into
// it would be copied again). The input check does not rule all of these out (it skips erased
// nodes, and does not read the slot of a node's single in-edge). At the first node the plan does
// not cover, the graph goes to the driver once the copies planned before it are made, and the
// driver goes on with its sweep there (apply_options::resume_at): the nodes before it, and the
// copies made, are in the state the driver would have left them in, with nothing to visit.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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

// What the phase did: the counters and copies of the whole phase, the node where it handed the
// graph to the driver (the number of vertices when the plan covered every node), and whether it
// left every value marked with where it lives (annotate-devices' work: asked for and every node
// covered).
struct planned_result {
  phase_result result{};
  vertex handed_over_at = 0;
  bool values_marked = false;
};

// A reader's slots as the plan reads them: the value and where it lives. On the stack for the
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

// A slot the table rewires: consumer's slot `slot` reads (producer, output) and gets a copy of
// `kind`. In the order the driver rewires them: by consumer, then (a device delegate) its h2d
// slots before its d2d slots, each kind by slot. Vertices as 32 bits: the list is the plan's
// only storage, written and read once.
struct shared_site {
  std::uint32_t consumer, slot, producer, output;
  op_kind kind;
};

// The plan: the sites, the nodes it covers, and the tries of the visits that find nothing more.
struct shared_plan {
  std::vector<shared_site> sites;
  vertex covered = 0;             // the nodes [0, covered): the driver goes on from `covered`
  std::size_t settled_tries = 0;  // every covered reader's slots under each of its rules
};

// Plans insert-shared-copies on g without changing it. `input`, when given, is propagate_device's
// input sweep: the plan visits each node for it as it passes (the caller finishes it). `checked`:
// the plan is used only on a graph the input check accepts, where a device delegate's value 0
// lives on its device (a delegate's outputs are marked, if at all, on its device), so that is not
// read again.
template <class G>
shared_plan plan_shared_copies(const G& g, bool skip_d2h, input_sweep<G>* input, bool checked) {
  shared_plan p;
  const vertex n = boost::num_vertices(g);
  if (n >= std::numeric_limits<std::uint32_t>::max()) return p;  // too many for the sites: the driver's
  slot_reads slots;
  const auto site = [&](vertex v, std::uint32_t s, op_kind kind) {
    const value_ref x = slots[s].value;
    p.sites.push_back({static_cast<std::uint32_t>(v), s, static_cast<std::uint32_t>(x.producer), x.output, kind});
  };
  p.sites.reserve(boost::num_edges(g));  // a site per slot at most: one allocation, filled as far as needed
  vertex v = 0;
  for (; v < n; ++v) {
    const bool erased = is_erased(g, v);
    const std::uint32_t rules_here = erased ? 0 : shared_rules_at(g, v, skip_d2h);
    const std::uint32_t arity = rules_here ? arity_of(g, v) : 0;
    const bool fed_once = rules_here && slots.read(g, v, arity);
    if (input) input->visit(g, v, fed_once);  // its slots are not read again
    if (erased) break;
    if (rules_here == 0) continue;  // no rule tries it, whatever its slots
    if (!fed_once) break;
    if (rules_here == 2) {  // a device delegate: rule 1's h2d copies, then rule 2's d2d copies
      const device at = node_device(g, v);
      if (!checked && location_of(g, value_ref{v, 0}) != at) break;
      for (std::uint32_t s = 0; s < arity; ++s)
        if (slots[s].from.is_host()) site(v, s, op_kind::h2d_copy);
      for (std::uint32_t s = 0; s < arity; ++s)
        if (!slots[s].from.is_host() && slots[s].from != at) site(v, s, op_kind::d2d_copy);
    } else {  // a node that reads on the host: rule 3's d2h copies
      for (std::uint32_t s = 0; s < arity; ++s)
        if (!slots[s].from.is_host()) site(v, s, op_kind::d2h_copy);
    }
    p.settled_tries += std::size_t{arity} * rules_here;
  }
  p.covered = v;
  return p;
}

// Marks node v's values where they live (mark_values_of). `checked`: on a graph the input check
// accepts, where a value a delegate, call or copy produces lives where its producer puts it
// (marked there, if at all), so its mark is written without being read.
template <class G>
void mark_values_where_they_live(G& g, vertex v, bool checked) {
  const std::optional<device> produced =
      checked ? devpass::detail::produces_on(role_of(g, v), node_device(g, v)) : std::nullopt;
  for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k)
    mark_device(g, {v, k}, produced ? *produced : location_of(g, value_ref{v, k}));
}

// The phase: the plan (and, given one not finished, propagate_device's input sweep, finished
// before anything changes), the copies it lists, then the driver from the first node it does not
// cover.
//
// With mark_values, it also marks each covered node's values as it passes the node (each copy
// comes marked from the model's add_copy): where a value lives does not change while copies are
// inserted (nor when round trips are elided after), so this is annotate-devices' result without a
// sweep of its own (docs/performance.md#what-each-design-choice-saves).
template <class G, class Options>
planned_result insert_shared_copies_planned(G& g, const Options& o, bool mark_values = false) {
  input_sweep<G>* const input = input_sweep_left_in<G>(o);
  const bool skip_d2h = o.skip_d2h_for_method_outputs;
  bool checked = false;  // propagate_device's input check accepts the graph before the plan is used
  if constexpr (requires { o.input; }) checked = o.input && o.input->checks();
  const shared_plan plan = plan_shared_copies(g, skip_d2h, input, checked);
  if (input) input->finish(g);  // refuses a graph that fails the input check, before any change

  rules::rewrite_context<propagate_options, G, rules::tracing::off> ctx(g, o, rewrite_state_for(g, o));
  rules::rewrite_counters& counted = ctx.counters;
  const std::size_t bound = 4 * (boost::num_vertices(g) + boost::num_edges(g)) + 64;  // the driver's, of the input
  std::array<vertex, 8> touched_few;  // a node's touched producers, while they are few
  std::vector<vertex> touched_by;     // else: the node whose rewrites last touched each
  const vertex n = boost::num_vertices(g);
  room_populator<G> room;
  // The phase makes one copy per value, kind and device (shared_copy finds any there is first),
  // named after all three: its candidate ids differ from each other.
  ctx.candidate_ids_free = candidates_free<G>(ctx.ids);
  const std::span<const shared_site> sites = plan.sites;
  std::size_t next = 0;  // the first site not made yet
  for (vertex v = 0; v < plan.covered; ++v) {
    if (mark_values) mark_values_where_they_live(g, v, checked);
    if (next == sites.size() || sites[next].consumer != v) continue;
    room.step(g);
    const std::uint32_t arity = arity_of(g, v);
    const device at = node_device(g, v);
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
    // A site fires after `tries` tries at this visit: the copy, the rewiring, and the visits the
    // driver then makes to the new copy and to a producer its sweep has passed.
    const auto fire = [&]<op_kind Kind>(const shared_site& site, device side, std::size_t tries) {
      const value_ref x{site.producer, site.output};
      const std::size_t made_before = counted.nodes_added;
      const vertex copy = rules::detail::shared_copy<Kind>(ctx, x, side);
      set_operand(g, v, site.slot, value_ref{copy, 0});
      ctx.revisit.clear();
      ++counted.rewrites;
      counted.matches_tried += tries;
      if (Kind == op_kind::h2d_copy && counted.nodes_added != made_before) ++counted.matches_tried;
      const vertex producer = x.producer;
      if (producer < v && first_touch(producer))  // else the driver visits it later (or it is v)
        counted.matches_tried += std::size_t{arity_of(g, producer)} * shared_rules_at(g, producer, skip_d2h);
    };
    for (; next < sites.size() && sites[next].consumer == v; ++next) {
      const shared_site& site = sites[next];
      switch (site.kind) {
        case op_kind::h2d_copy: fire.template operator()<op_kind::h2d_copy>(site, at, site.slot + 1); break;
        case op_kind::d2d_copy: fire.template operator()<op_kind::d2d_copy>(site, at, arity + site.slot + 1); break;
        default:
          fire.template operator()<op_kind::d2h_copy>(site, device_of(g, value_ref{site.producer, site.output}),
                                                      site.slot + 1);
      }
    }
  }
  counted.matches_tried += plan.settled_tries;
  ctx.candidate_ids_free = false;  // the driver asks the allocator, which then reads the phase's copies
  if (plan.covered < n)
    (void)rules::apply_rules(devpass_copy_table, ctx, {.bound = bound, .resume_at = plan.covered, .sweep_end = n});
  planned_result done;
  done.result = table_result(counted, ctx);
  done.handed_over_at = plan.covered;
  done.values_marked = mark_values && plan.covered == n;
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
// insert-shared-copies is planned and made (above) when the policy's fuse_shared_copies knob is
// on and the run is not traced (a trace reports the rules tried), and the making also marks the
// values when the instrumentation does not look at the graph between phases, so that
// annotate-devices has nothing left to do when the plan covered every node; otherwise each runs
// as in a pipeline that lists the three itself. It takes propagate_device's input sweep: the plan
// visits each node for it, the rule table runs after it is finished.
struct shared_copies : for_copy_policy<copy_policy::devpass> {
  static constexpr std::string_view name = "devpass-copies";
  using expects = type_list<capabilities::devices_assigned>;
  using provides = type_list<capabilities::copies_explicit, capabilities::round_trips_elided>;
  static constexpr bool takes_input_sweep = true;

  template <class Policy, class G, class Options, class Instrumentation>
  phase_result run_reporting(G& g, const Options& o, Instrumentation& instrumentation) const {
    pipeline::constituent_reporter<phase_result, G, Instrumentation> reported{g, instrumentation};
    bool values_marked = false;
    if constexpr (knobs_of<Policy>().fuse_shared_copies && !requires { o.trace; }) {
      reported.begin(insert_shared_copies::name);
      const fused::planned_result made =
          fused::insert_shared_copies_planned(g, o, !pipeline::inspects_graph(instrumentation));
      reported.end(insert_shared_copies::name, made.result);
      values_marked = made.values_marked;
    } else {
      if (input_sweep<G>* input = input_sweep_left_in<G>(o)) input->finish(g);
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
