// devpass/passes/fused_executorch_copies.hpp — ExecuTorch's copy phases (insert-input-copies,
// insert-output-copies, elide-round-trips) done as one planned pass: the copies are decided on a
// side table first and only those elision would keep are made (docs/device-propagation.md,
// "The fused executorch path"). The graph it leaves is the one the three rule tables leave, node
// for node in the same order, and it reports each phase's counters as the literal run would
// count them (logical counts: the copies it never made are counted as inserted and elided).
// Making the copies also marks every value where it lives, so that annotate-devices, the last
// phase of the composite, has nothing left.
//
// The plan covers the graphs ExecuTorch hands the pass: no copy and no erased node yet, every
// input slot connected once, every edge naming an existing output, no self-loop. On any other
// graph it declines (before changing anything) and the composite phase runs the rule tables.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"
#include "devpass/passes/propagation_phases.hpp"

namespace devpass::propagation {

namespace fused {
// What the plan knows of each value, a byte each.
enum value_flag : std::uint8_t {
  placed = 1,          // its producer is placed by the file (placed_by_file)
  host_reader = 2,     // read by a call or a host delegate
  output_reader = 4,   // read by the output node
  non_output_use = 8,  // read by something other than the output node
  has_h2d = 16,        // insert-input-copies copies it into some device delegate's slot
  keeps_h2d = 32,      // ... and elision keeps at least one of those copies
  gets_d2h = 64,       // insert-output-copies makes its d2h
  d2h_dead = 128,      // ... and elision erases it again
};

// An h2d copy the plan keeps: into slot `slot` of device delegate `delegate`, of value
// (producer, output). In the order insert-input-copies makes them: by delegate, then slot.
struct h2d_site {
  std::uint32_t delegate, slot, producer, output;
};

// The plan: per-value flags, locations and sizes, and what the literal phases would have
// reported. Its later sweeps read these side tables, not the vertices: a value's producer is
// anywhere in the vertex array, and one read of it costs a cache miss on a large graph.
struct plan {
  std::vector<std::uint32_t> first_value;  // per vertex, the index of its output 0 among all values
  std::vector<device> location;            // per value: location_of before the pass
  std::vector<std::uint64_t> bytes;        // per value: value_bytes, what each copy of it moves
  std::vector<std::uint8_t> flags;         // per value: value_flag
  std::vector<h2d_site> h2d_sites;         // the h2d copies to make (making them reads no slot again)
  std::size_t d2h_kept = 0;                // the d2h copies to make
  bool elide = false;
  // insert-input-copies, insert-output-copies, elide-round-trips. output's matches_tried lacks
  // the driver's second visits to the readers each kept d2h copy takes over: making the copies
  // walks those readers anyway, and counts them (made_copies::reader_revisit_tries).
  phase_result input, output, elision;
};

// Does insert-input-copies copy value x (location `at`, flags `f`) into a slot of a delegate on
// `consumer` (executorch_copies_in)? And does elide-round-trips then remove that copy again?
constexpr bool copies_in(std::uint8_t f, device at, device consumer) {
  return copies_into_delegate(f & placed, at, consumer);
}
constexpr bool elided(bool elide, device at, device consumer) { return elide && !at.is_host() && at == consumer; }

// Does `consumer` read a value on the host, so that insert-output-copies moves it to the d2h?
// (executorch_moves once the d2h exists: the output node then always moves.)
template <class G>
bool moves_to_d2h(const G& g, vertex consumer) {
  return role_of(g, consumer) == op_kind::output || reads_on_host(g, use{consumer, 0});
}

// The input slots of v by slot, into `slots`; false unless each of its slots has exactly one
// in-edge that names an existing output of another node.
template <class G>
bool read_slots(const G& g, vertex v, std::vector<value_ref>& slots) {
  constexpr vertex none = std::numeric_limits<vertex>::max();
  const std::uint32_t arity = arity_of(g, v);
  if (boost::in_degree(v, g) != arity) return false;
  slots.assign(arity, value_ref{none, 0});
  for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
    const vertex source = boost::source(e, g);
    const std::uint32_t slot = edge_slot(g, e), output = edge_output(g, e);
    if (slot >= arity || slots[slot].producer != none || source == v || output >= output_count(g, source)) return false;
    slots[slot] = value_ref{source, output};
  }
  return true;
}
}  // namespace fused

// Plans ExecuTorch's three copy phases on g without changing it; nullopt when g is outside what
// the plan covers (see the header comment). The matches_tried counts follow the rewrite
// driver's visiting order (rules/rewrite_driver.hpp): a node is retried after each rewrite, and the
// nodes a rewrite touched that the sweep had passed are visited once more.
// `input`, when given, is propagate_device's input sweep, left to the plan: its first sweep visits
// each node for it as it passes (the caller finishes it, whether the plan declined or not).
template <class G>
std::optional<fused::plan> plan_executorch_copies(const G& g, const propagate_options& o, bool elide,
                                                  input_sweep<G>* input = nullptr) {
  using namespace fused;
  const std::size_t n = boost::num_vertices(g);
  if (n >= std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  plan p;
  p.elide = elide;
  p.first_value.resize(n + 1);
  p.location.reserve(n);
  p.bytes.reserve(n);
  p.flags.reserve(n);
  // Each vertex's values: where they live, their size, whether the file places them.
  const auto add_values = [&](vertex v) {
    const op_kind op = role_of(g, v);
    if (is_erased(g, v) || is_copy(op)) return false;
    p.first_value[v] = static_cast<std::uint32_t>(p.location.size());
    const std::uint8_t placement = placed_by_file(op) ? placed : 0;
    for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k) {
      p.location.push_back(location_of(g, value_ref{v, k}));
      p.bytes.push_back(value_bytes(g, value_ref{v, k}));
      p.flags.push_back(placement);
    }
    return p.location.size() < std::numeric_limits<std::uint32_t>::max();
  };

  // Who reads each value, and insert-input-copies' copies: consumer k's slots, in `slots`.
  std::vector<std::uint32_t> seen(n, std::numeric_limits<std::uint32_t>::max());  // dedup stamps
  std::vector<value_ref> slots;
  rules::rewrite_counters& in = p.input.counters;
  std::size_t h2d_elided = 0;
  const auto add_reads = [&](vertex k) {
    const op_kind op = role_of(g, k);
    const device at = node_device(g, k);
    const bool device_delegate = op == op_kind::delegate && !at.is_host();
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
      const value_ref value = slots[s];
      const std::uint32_t xi = p.first_value[value.producer] + value.output;
      std::uint8_t& f = p.flags[xi];
      if (op == op_kind::output) {
        f |= output_reader;
        continue;
      }
      f |= non_output_use;
      if (!device_delegate) {
        if (reads_on_host(g, use{k, s})) f |= host_reader;
        continue;
      }
      if (!copies_in(f, p.location[xi], at)) continue;
      // The copy into slot s: the driver tried slots 0..s to find it.
      f |= has_h2d;
      ++in.nodes_added;
      in.matches_tried += s + 1;
      p.input.copies_made.add(op_kind::h2d_copy, p.bytes[xi]);
      if (elided(elide, p.location[xi], at)) {
        ++h2d_elided;
      } else {
        f |= keeps_h2d;
        p.h2d_sites.push_back(
            {static_cast<std::uint32_t>(k), s, static_cast<std::uint32_t>(value.producer), value.output});
      }
      // The rewrite touched the producer: visited again once if the sweep had passed it (a
      // device delegate tries each of its slots; no other node matches the table's pattern).
      const vertex producer = value.producer;
      if (producer < k && seen[producer] != k && role_of(g, producer) == op_kind::delegate &&
          !node_device(g, producer).is_host()) {
        seen[producer] = static_cast<std::uint32_t>(k);
        in.matches_tried += arity_of(g, producer);
      }
    }
    if (device_delegate) in.matches_tried += slots.size();  // the visit that finds nothing more
  };

  // One sweep does both while every node read so far reads only values of the nodes before it
  // (a graph in topological order, as files are written): each vertex is then loaded once, not
  // once a sweep (docs/performance.md#what-each-design-choice-saves). From the first node that
  // reads a later one, the values of the rest are gathered first and their reads after.
  vertex reads_from = n;  // the first consumer whose reads are left to the second sweep
  for (vertex v = 0; v < n; ++v) {
    if (input) input->visit(g, v);
    if (!add_values(v)) return std::nullopt;
    if (reads_from != n) continue;
    if (!fused::read_slots(g, v, slots)) return std::nullopt;
    if (std::any_of(slots.begin(), slots.end(), [&](value_ref read) { return read.producer > v; }))
      reads_from = v;
    else
      add_reads(v);
  }
  p.first_value[n] = static_cast<std::uint32_t>(p.location.size());
  for (vertex k = reads_from; k < n; ++k) {
    if (!fused::read_slots(g, k, slots)) return std::nullopt;
    add_reads(k);
  }
  in.rewrites = in.nodes_added;

  // insert-output-copies: the device values with host readers (needs_host_copy_executorch, on
  // the graph insert-input-copies left: its copies read on the host). From the side tables alone.
  rules::rewrite_counters& out = p.output.counters;
  std::size_t d2h_erased = 0;
  for (vertex v = 0; v < n; ++v) {
    const std::uint32_t outputs = p.first_value[v + 1] - p.first_value[v];
    out.matches_tried += outputs;  // the visit that finds nothing more
    for (std::uint32_t k = 0; k < outputs; ++k) {
      const std::uint32_t xi = p.first_value[v] + k;
      std::uint8_t& f = p.flags[xi];
      const bool host_reads = (f & (has_h2d | host_reader)) ||
                              ((f & output_reader) && (!o.skip_d2h_for_method_outputs || (f & non_output_use)));
      if (p.location[xi].is_host() || !host_reads) continue;
      f |= gets_d2h;
      ++out.nodes_added;
      out.matches_tried += k + 1;
      p.output.copies_made.add(op_kind::d2h_copy, p.bytes[xi]);
      if (elide && !(f & (host_reader | output_reader | keeps_h2d))) {
        f |= d2h_dead, ++d2h_erased;
        continue;  // read by copies only, all of them h2d copies made after every node: none visited again
      }
      ++p.d2h_kept;  // the readers it takes over are counted as it is made
    }
  }
  out.rewrites = out.nodes_added;
  // The sweep also visits every h2d copy (one output each, on its device, read by its delegate
  // alone), and each new d2h once (its output on the host).
  out.matches_tried += in.nodes_added + out.nodes_added;

  // elide-round-trips: every node but an elided h2d tries both rules; an elided h2d fires the
  // first at once, and its delegate and the value's producer are visited again (two rules each).
  if (elide) {
    rules::rewrite_counters& gone = p.elision.counters;
    const std::size_t h2d_total = in.nodes_added, d2h_total = out.nodes_added;
    gone.rewrites = h2d_elided;
    gone.nodes_removed = h2d_elided + d2h_erased;
    gone.matches_tried = 2 * n + 5 * h2d_elided + 2 * (h2d_total - h2d_elided) + 2 * (d2h_total - d2h_erased);
  }
  return p;
}

// What materialise_executorch_copies did: the copies it made (the census after the pass is the
// one before plus these: nothing is removed), and the tries the literal insert-output-copies
// makes when it visits again the readers a d2h copy took over that its sweep had passed (each
// reader once per producer, each of its outputs tried), which the plan leaves to be counted here.
struct made_copies {
  copy_census copies;
  std::size_t reader_revisit_tries = 0;
};

// Makes the copies the plan keeps, in the order the literal phases make them (and elision's
// compaction keeps): h2d copies by delegate and slot, then d2h copies by value.
// It also marks every value where it lives, annotate-devices' work, as its sweep over the values
// passes each node (making copies moves no value: each lives where it lived before; and each copy
// comes marked from the model's add_copy).
template <class G>
made_copies materialise_executorch_copies(G& g, const fused::plan& p, rewrite_state_t<G> ids) {
  using namespace fused;
  const std::size_t n = p.first_value.size() - 1;
  const std::size_t kept = p.h2d_sites.size() + p.d2h_kept;
  reserve_nodes(g, n + kept);
  reserve_edges(g, g.m_edges.size() + kept);
  populate_room(g, kept, kept);  // each copy is one vertex and one edge
  made_copies made;
  // The candidate ids differ from each other (one per delegate slot, one per value): where the
  // model's allocator says every candidate is free, the copies take theirs without asking it.
  const bool ids_free = candidates_free<G>(ids);
  // A copy of r.source, connected to it and counted.
  const auto make_copy = [&](const copy_request& r, std::uint64_t bytes) {
    const vertex copy = add_copy_vertex(g, ids, r, ids_free);
    made.copies.add(r.kind, bytes);
    connect(g, r.source, copy, 0);
    return copy;
  };
  const auto bytes_of = [&](value_ref value) { return p.bytes[p.first_value[value.producer] + value.output]; };
  // The sites name vertices all over the graph: each one's delegate and producer are fetched a
  // few sites ahead, so that their cache misses overlap
  // (docs/performance.md#what-each-design-choice-saves).
  constexpr std::size_t ahead = 16;
  for (std::size_t i = 0; i < p.h2d_sites.size(); ++i) {
    if (i + ahead < p.h2d_sites.size()) {
      prefetch_vertex(g, p.h2d_sites[i + ahead].delegate);
      prefetch_vertex(g, p.h2d_sites[i + ahead].producer);
    }
    const h2d_site& site = p.h2d_sites[i];
    const vertex k = site.delegate;
    const value_ref value{site.producer, site.output};
    const vertex copy = make_copy({op_kind::h2d_copy, node_device(g, k), value, copy_naming::after_use, {k, site.slot}},
                                  bytes_of(value));
    set_operand(g, k, site.slot, value_ref{copy, 0});
  }
  std::vector<use> moved;
  std::vector<std::uint32_t> revisited;  // per vertex, the last producer whose d2h revisited it
  for (vertex v = 0; v < n; ++v) {
    mark_values_of(g, v);
    for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k) {
      const std::uint8_t f = p.flags[p.first_value[v] + k];
      if (!(f & gets_d2h) || (f & d2h_dead)) continue;
      const value_ref value{v, k};
      const vertex copy =
          make_copy({op_kind::d2h_copy, device_of(g, value), value, copy_naming::after_value, {}}, bytes_of(value));
      moved.clear();
      for_each_use(g, value, [&](use u) {
        if (u.consumer != copy && fused::moves_to_d2h(g, u.consumer)) moved.push_back(u);
      });
      for (const use u : moved) {
        set_operand(g, u.consumer, u.slot, value_ref{copy, 0});
        if (u.consumer >= v) continue;  // the literal sweep visits it later anyway
        if (revisited.empty()) revisited.assign(n, std::numeric_limits<std::uint32_t>::max());
        if (revisited[u.consumer] == v) continue;
        revisited[u.consumer] = static_cast<std::uint32_t>(v);
        made.reader_revisit_tries += output_count(g, u.consumer);
      }
    }
  }
  return made;
}

// insert-input-copies, insert-output-copies, (when elision is on) elide-round-trips and
// annotate-devices: the executorch policy's part of the stock pipeline, one phase reported to the
// instrumentation as those four. Fused when the policy's fuse_executorch_copies knob is on, the
// run is not traced (a trace reports the rules tried), the instrumentation does not inspect the
// graph between phases, and the graph is one the plan covers: the copies are planned, then made,
// and the making marks every value, so that annotate-devices has nothing left. Otherwise the
// three rule tables and annotate-devices run, as in a pipeline that lists them itself. Fused,
// insert-input-copies' time is the planning, insert-output-copies' the making.
struct executorch_copies : for_copy_policy<copy_policy::executorch> {
  static constexpr std::string_view name = "executorch-copies";
  using expects = type_list<capabilities::devices_assigned>;
  using provides = type_list<capabilities::copies_explicit, capabilities::round_trips_elided>;
  static constexpr bool takes_input_sweep = true;  // the plan visits each node for it, or it is finished first

  // Whether a run with these options and this instrumentation plans (the fused path; the plan
  // may still decline the graph): the policy's knob, an untraced run, an instrumentation that
  // does not inspect the graph between phases.
  template <class Policy, class Options, class Instrumentation>
  static bool plans(const Options& o, const Instrumentation& instrumentation) {
    if constexpr (knobs_of<Policy>().fuse_executorch_copies && !requires { o.trace; })
      return !pipeline::inspects_graph(instrumentation);
    else
      return false;
  }

  template <class Policy, class G, class Options, class Instrumentation>
  phase_result run_reporting(G& g, const Options& o, Instrumentation& instrumentation) const {
    constexpr propagate_knobs knobs = knobs_of<Policy>();
    const bool elide = knobs.elide_round_trips && elide_round_trips{}.active(o);
    pipeline::constituent_reporter<phase_result, G, Instrumentation> reported{g, instrumentation};
    reported.begin(insert_input_copies::name);
    std::optional<fused::plan> plan;
    input_sweep<G>* const input = input_sweep_left_in<G>(o);
    if (plans<Policy>(o, instrumentation)) plan = plan_executorch_copies(g, o, elide, input);
    if (input) input->finish(g);  // refuses a graph that fails the input check, before any change
    if (!plan) {
      reported.end(insert_input_copies::name, insert_input_copies{}.run(g, o));
      reported.run(insert_output_copies{}, o);
      if (elide) reported.run(elide_round_trips{}, o);
      reported.run(annotate_devices{}, o);
      return reported.total;
    }
    reported.end(insert_input_copies::name, plan->input);
    reported.begin(insert_output_copies::name);
    const made_copies made = materialise_executorch_copies(g, *plan, rewrite_state_for(g, o));
    reported.total.copies_kept = made.copies;
    plan->output.counters.matches_tried += made.reader_revisit_tries;
    reported.end(insert_output_copies::name, plan->output);
    if (elide) {
      reported.begin(elide_round_trips::name);
      reported.end(elide_round_trips::name, plan->elision);
    }
    reported.done_by_another(annotate_devices::name);  // the making marked every value
    return reported.total;
  }
};

}  // namespace devpass::propagation
