// devpass/rules/context.hpp — what guards and actions see while a rule table runs: the graph,
// the user's options, an id allocator for new nodes, counters, and the nodes to revisit.
#pragma once

#include <cstddef>
#include <vector>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/id_allocator.hpp"

namespace devpass::rules {

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
};

template <class Options>
struct rewrite_context {
  rewrite_context(graph& graph_, const Options& options_) : g(graph_), options(options_), ids(graph_) {}

  graph& g;
  const Options& options;
  id_allocator ids;
  rewrite_counters counters;
  std::vector<vertex> revisit;  // filled by actions, drained by the driver
  copy_census copies_made;      // the copies add() made

  vertex add(node n) {
    copies_made.add(n);  // counted now, while the node is in cache
    const vertex v = add_node(g, std::move(n));
    ++counters.nodes_added;
    revisit.push_back(v);
    return v;
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
