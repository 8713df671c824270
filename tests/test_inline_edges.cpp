// Edge lists with entries inline (graph/inline_edges.hpp): the concept admits them beside vecS,
// devpass's structural operations and Boost.Graph's own give the same graph on them as on vecS,
// and devpass::graph keeps a list of one entry in the vertex.
#include <doctest/doctest.h>

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/inline_edges.hpp"
#include "devpass/graph/structure.hpp"

using namespace devpass;

namespace {
struct test_op {
  op_kind op = op_kind::call;
  std::uint32_t arity = 0;
  bool erased = false;
  std::uint32_t outputs = 1;
};
template <class OutEdgeListS>
using test_graph = boost::adjacency_list<OutEdgeListS, boost::vecS, boost::bidirectionalS, test_op, edge_info,
                                         boost::no_property, boost::vecS>;

template <class S>
constexpr bool storage_of = model_requirements::adjacency_list_storage<test_graph<S>>;
}  // namespace

// What the structural operations read of a model (structure.hpp; names for the ordering's errors).
template <class OutEdgeListS>
struct devpass::graph_model<test_graph<OutEdgeListS>> {
  using G = test_graph<OutEdgeListS>;
  static op_kind role(const G& g, vertex v) { return g[v].op; }
  static bool erased(const G& g, vertex v) { return g[v].erased; }
  static void mark_erased(G& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const G& g, vertex v) { return g[v].arity; }
  static void set_arity(G& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const G& g, vertex v) { return g[v].outputs; }
  static std::string name(const G&, vertex v) { return "n" + std::to_string(v); }
};

namespace {
// Every live node's operands by slot and every value's uses, in vertex order: what a pass sees.
template <class G>
std::vector<std::vector<value_ref>> operand_lists(const G& g) {
  std::vector<std::vector<value_ref>> lists;
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    if (!is_erased(g, v)) lists.push_back(operands(g, v));
  return lists;
}
template <class G>
std::vector<std::vector<use>> use_lists(const G& g) {
  std::vector<std::vector<use>> lists;
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    for (std::uint32_t k = 0; k < output_count(g, v); ++k) lists.push_back(uses(g, {v, k}));
  return lists;
}

// A value read by six slots (past any inline capacity), rewired, a node erased, compacted.
template <class G>
void fan_out_rewire_erase_compact(G& g) {
  const vertex x = boost::add_vertex(test_op{op_kind::input}, g);
  const vertex y = boost::add_vertex(test_op{op_kind::input}, g);
  const vertex a = boost::add_vertex(test_op{}, g);
  const vertex b = boost::add_vertex(test_op{}, g);
  const vertex out = boost::add_vertex(test_op{op_kind::output, 0, false, 0}, g);
  for (std::uint32_t slot = 0; slot < 4; ++slot) connect(g, {x, 0}, a, slot);
  connect(g, {x, 0}, b, 0);
  connect(g, {x, 0}, b, 1);
  connect(g, {a, 0}, out, 0);
  connect(g, {b, 0}, out, 1);
  set_operand(g, a, 1, {y, 0});  // a use from the middle of x's list: the last one takes its place
  set_operand(g, b, 1, {y, 0});
  set_operand(g, a, 3, {b, 0});
  REQUIRE(use_count(g, {x, 0}) == 3);
  erase_node(g, a);  // out's slot 0 is left unconnected, x's and y's lists shrink
  compact(g);
}
}  // namespace

TEST_CASE("inline edges: the concept admits vecS-like edge lists and refuses the others") {
  static_assert(storage_of<boost::vecS> && storage_of<inline_vec_s<1>> && storage_of<inline_vec_s<4>>);
  static_assert(!storage_of<boost::listS>);      // not random access
  static_assert(!storage_of<boost::setS>);       // nor this, and no parallel edges
  static_assert(!storage_of<boost::multisetS>);  // parallel edges, not random access
  static_assert(model_requirements::adjacency_list_storage<graph>);
  static_assert(random_access_edge_list<inline_vector<int, 1>>);
  CHECK(check_graph_model<graph>());
}

TEST_CASE_TEMPLATE("inline edges: the structural operations give vecS's graph", OutEdgeListS, inline_vec_s<1>,
                   inline_vec_s<2>, inline_vec_s<8>) {
  test_graph<boost::vecS> expected;
  fan_out_rewire_erase_compact(expected);
  test_graph<OutEdgeListS> g;
  fan_out_rewire_erase_compact(g);
  REQUIRE(boost::num_vertices(g) == 4);
  CHECK(boost::num_edges(g) == boost::num_edges(expected));
  CHECK(operand_lists(g) == operand_lists(expected));
  CHECK(use_lists(g) == use_lists(expected));
  CHECK(uses(g, {0, 0}) == std::vector<use>{{2, 0}});  // x: b's slot 0, once a's uses were gone
  CHECK(uses(g, {1, 0}) == std::vector<use>{{2, 1}});  // y: b's slot 1
  CHECK(topological_order(g) == topological_order(expected));
}

TEST_CASE_TEMPLATE("inline edges: Boost.Graph's own functions run on the lists", OutEdgeListS, boost::vecS,
                   inline_vec_s<1>) {
  test_graph<OutEdgeListS> g;
  const vertex x = boost::add_vertex(g), a = boost::add_vertex(g), b = boost::add_vertex(g);
  connect(g, {x, 0}, a, 0);
  connect(g, {x, 0}, a, 1);  // a parallel edge
  connect(g, {x, 0}, b, 0);
  CHECK(boost::out_degree(x, g) == 3);
  CHECK(boost::in_degree(a, g) == 2);
  const test_graph<OutEdgeListS> copy = g;  // re-adds every edge through boost::add_edge
  CHECK(boost::num_edges(copy) == 3);
  CHECK(operands(copy, a) == std::vector<value_ref>{{x, 0}, {x, 0}});
  const auto [first, last] = boost::adjacent_vertices(x, copy);
  CHECK(std::vector<vertex>(first, last) == std::vector<vertex>{a, a, b});
  const auto [first_in, last_in] = boost::inv_adjacent_vertices(a, copy);
  CHECK(std::vector<vertex>(first_in, last_in) == std::vector<vertex>{x, x});
}

TEST_CASE("inline edges: devpass::graph keeps a node's one operand and one use in the vertex") {
  graph g;
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {tensor_spec{dtype::float32, {2}}}});
  const vertex r = add_node(g, {.id = "r", .op = op_kind::call, .outputs = {tensor_spec{dtype::float32, {2}}}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, r, 0);
  connect(g, {r, 0}, out, 0);
  const auto inside = [&](vertex v, const void* p) {
    const auto* first = reinterpret_cast<const char*>(&g.m_vertices[v]);
    const auto* at = static_cast<const char*>(p);
    return at >= first && at < first + sizeof(g.m_vertices[v]);
  };
  CHECK(inside(r, g.m_vertices[r].m_in_edges.data()));
  CHECK(inside(r, g.m_vertices[r].m_out_edges.data()));
  connect(g, {x, 0}, out, 1);  // x's second use: its list moves to the heap
  CHECK_FALSE(inside(x, g.m_vertices[x].m_out_edges.data()));
  CHECK(uses(g, {x, 0}) == std::vector<use>{{r, 0}, {out, 1}});
  CHECK(sizeof(g.m_vertices[x].m_out_edges) == 32);  // 24 bytes of entry, 8 of size and capacity
}

TEST_CASE("inline_vector: erase slides the rest down, inline and on the heap") {
  inline_vector<int, 2> v{1, 2};
  CHECK(*v.erase(v.begin()) == 2);
  CHECK(v == inline_vector<int, 2>{2});
  v = {1, 2, 3, 4, 5};
  CHECK(*v.erase(v.begin() + 1, v.begin() + 3) == 4);
  CHECK(v == inline_vector<int, 2>{1, 4, 5});
  const auto* const past = v.erase(v.begin() + 1, v.end());
  CHECK(past == v.end());
  CHECK(v == inline_vector<int, 2>{1});
}
