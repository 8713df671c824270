// devpass/rules/context.hpp — what guards and actions see while a rule table runs: the graph (any
// model of graph_model.hpp), the user's options, the model's rewrite state (devpass::graph: an
// id allocator for new nodes), counters, and the nodes to revisit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/id_allocator.hpp"
#include "devpass/graph/rewrite_counters.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/rules/trace.hpp"

namespace devpass::diagnostic {
template <class Graph>
struct this_graph_model_cannot_make_nodes;
}  // namespace devpass::diagnostic

namespace devpass::rules {

// The copies a rule table has found or made, by (value, copy kind, device side): a shared copy is
// looked up once per use of its value, and scanning a value's uses for it each time is quadratic
// in its fan-out (a million readers of one input). An entry is only a hint: lookup() checks that
// the node is still that copy of that value, and the caller scans the uses when it is not.
class copy_index {
 public:
  template <class G>
  [[nodiscard]] std::optional<vertex> lookup(const G& g, value_ref value, op_kind kind, device side) const {
    const auto it = copies_.find(key_of(value, kind, side));
    if (it == copies_.end()) return std::nullopt;
    const vertex c = it->second;
    if (c >= boost::num_vertices(g) || is_erased(g, c) || role_of(g, c) != kind || node_device(g, c) != side)
      return std::nullopt;
    const auto read = operand(g, c, 0);
    if (!read || !(*read == value)) return std::nullopt;
    return c;
  }
  void remember(value_ref value, op_kind kind, device side, vertex copy) { copies_[key_of(value, kind, side)] = copy; }

 private:
  struct key {
    vertex producer;
    std::uint32_t output;
    std::uint32_t kind_and_side;
    friend bool operator==(const key&, const key&) = default;
  };
  struct key_hash {
    std::size_t operator()(const key& k) const noexcept {
      std::uint64_t h = static_cast<std::uint64_t>(k.producer) * 0x9E3779B97F4A7C15ull;
      h ^= (static_cast<std::uint64_t>(k.output) << 32 | k.kind_and_side) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
      return static_cast<std::size_t>(h);
    }
  };
  static key key_of(value_ref value, op_kind kind, device side) {
    return {value.producer, value.output,
            static_cast<std::uint32_t>(kind) << 24 | static_cast<std::uint32_t>(side.type) << 16 | side.index};
  }
  std::unordered_map<key, vertex, key_hash> copies_;
};

// Whether a context's driver can report the rules it tries (trace.hpp) and name a rule as written
// in its errors. The explanations and descriptions are code for every rule of every table the
// context runs, compiled whether or not a trace is ever set, and most of a traced table's compile
// time per rule (docs/performance.md, "Rule tables, traced and untraced"). So a context traces
// only when its type asks: tracing::on.
enum class tracing : bool { off, on };

namespace detail {
template <class>
inline constexpr bool always_false = false;
// An untraced context's `trace`: setting it is a compile error that says what to do.
struct no_trace {
  template <class T>
  no_trace& operator=(const T&) {
    static_assert(always_false<T>,
                  "devpass: this rewrite_context does not trace; declare it "
                  "rewrite_context<Options, G, rules::tracing::on> to set `trace`");
    return *this;
  }
};
template <tracing Tracing>
struct trace_member {
  [[no_unique_address]] no_trace trace;
};
template <>
struct trace_member<tracing::on> {
  const rule_trace* trace = nullptr;  // when set, the driver reports every rule it tries (trace.hpp)
};
}  // namespace detail

template <class Options, class Graph = graph, tracing Tracing = tracing::off>
struct rewrite_context : detail::trace_member<Tracing> {
  static_assert(check_graph_model<Graph>());
  using graph_type = Graph;
  static constexpr bool traced = Tracing == tracing::on;
  rewrite_context(Graph& graph_, const Options& options_) : g(graph_), options(options_), ids(graph_) {}
  // With a rewrite state made by the caller (make_rewrite_state: from a seed).
  rewrite_context(Graph& graph_, const Options& options_, rewrite_state_t<Graph> ids_)
      : g(graph_), options(options_), ids(std::move(ids_)) {}

  Graph& g;
  const Options& options;
  rewrite_state_t<Graph> ids;  // what the model needs to make nodes (devpass::graph: unique ids)
  rewrite_counters counters;
  std::vector<vertex> revisit;  // filled by actions, drained by the driver
  copy_census copies_made;      // the copies add() made
  copy_index copies;            // the copies of each value found or made so far (find_copy)
  // Set by a caller whose copies' candidate ids differ from each other, where the rewrite state
  // said each is free (graph_model.hpp, candidates_free): add_copy then names each copy with its
  // candidate as it is. The caller clears it before anything else makes nodes through the context.
  bool candidate_ids_free = false;

  // A copy of r.source, connected to it (graph_model.hpp, copy_request).
  vertex add_copy(const copy_request& r) {
    const vertex v = add_copy_vertex(g, ids, r, candidate_ids_free);
    // Counted now, while the node is in cache; resident as the model made it (one that stores no
    // such mark made an ordinary copy).
    copies_made.add(r.kind, value_bytes(g, value_ref{v, 0}), r.resident && is_resident(g, v));
    connect(g, r.source, v, 0);
    ++counters.nodes_added;
    revisit.push_back(v);
    return v;
  }
  // Any node (devpass::graph only: a model makes its vertices through add_copy).
  vertex add(node n) {
    static_assert(std::is_same_v<Graph, graph>,
                  "devpass: rewrite_context::add(node) is for devpass::graph; use add_copy");
    copies_made.add(n);  // counted now, while the node is in cache
    const vertex v = devpass::add_node(g, std::move(n));
    ++counters.nodes_added;
    revisit.push_back(v);
    return v;
  }
  // Any node, through the model (graph_model.hpp, node_request): what result patterns build
  // (build_actions.hpp). A model without add_node cannot: a compile error naming it.
  vertex add_node(const node_request& r) {
    if constexpr (!model_requirements::add_node_with_state<Graph>) {
      static_assert(diagnostic::report<diagnostic::this_graph_model_cannot_make_nodes<Graph>>());
      static_assert(model_requirements::add_node_with_state<Graph>,
                    "devpass: actions that build nodes need `static vertex add_node(G&, const node_request&)` in "
                    "graph_model<G> (or add_node(G&, rewrite_state&, const node_request&))");
      return 0;
    } else {
      const vertex v = add_node_vertex(g, ids, r);
      ++counters.nodes_added;
      revisit.push_back(v);
      return v;
    }
  }
  void remove(vertex v) {
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) revisit.push_back(boost::source(e, g));
    erase_node(g, v);
    ++counters.nodes_removed;
  }
  void touch(vertex v) { revisit.push_back(v); }
  void touch_uses(value_ref value) {
    for_each_use(g, value, [&](use u) { revisit.push_back(u.consumer); });
  }
};

}  // namespace devpass::rules
