// devpass/graph/graph_model.hpp — the graph concept: what a graph type provides so that
// devpass's patterns, rules, pipelines, passes and planner run on it. G is a
// boost::adjacency_list<OutEdgeListS, vecS, bidirectionalS, V, E, GP, vecS> whose out- and in-edge
// lists are random-access sequences allowing parallel edges (OutEdgeListS vecS, or a selector of
// that kind: inline_edges.hpp's inline_vec_s<N>; random_access_edge_list below), whose edge
// property carries devpass::edge_info's three numbers (its members, or members the model names:
// edge_fields), with a specialization of devpass::graph_model<G> giving the
// vertex operations (role, erased, arity, devices, value dtype and bytes, name, add_copy, ...)
// over the user's own V. devpass::graph (graph.hpp) is one model, a compiler's own IR another
// (examples/own_graph/). docs/graph-concept.md lists every operation, what it means and which
// are optional. The concept is modeled_graph<G> (plannable_graph<G> adds set_buffer); every
// entry point asserts check_graph_model<G>(), whose first error line names what a type lacks.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <boost/pending/container_traits.hpp>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "devpass/graph/device.hpp"
#include "devpass/graph/dtype.hpp"
#include "devpass/graph/op_kind.hpp"
#include "devpass/graph/tensor_spec.hpp"

namespace devpass {

// The vertex descriptor of every vecS adjacency_list.
using vertex = std::size_t;

// The source and target of an edge erase_node left in the edge vector for compact() to drop.
inline constexpr vertex dead_vertex = static_cast<vertex>(-1);

// One value: output `output` of node `producer`.
struct value_ref {
  vertex producer = 0;
  std::uint32_t output = 0;
  friend bool operator==(const value_ref&, const value_ref&) = default;
};

// One use of a value: input slot `slot` of node `consumer`.
struct use {
  vertex consumer = 0;
  std::uint32_t slot = 0;
  friend bool operator==(const use&, const use&) = default;
};

// The edge property devpass's own graph uses; a model may use its own type with these members.
struct edge_info {
  std::uint32_t output = 0;  // which output of the producer
  std::uint32_t slot = 0;    // which input slot of the consumer
  // Where this edge sits in its producer's out-edge list: a hint that makes removing one use of
  // a value O(1) however many uses it has (a million-way fan-out moves a million uses). Checked
  // before use, and rebuilt for the whole list when stale (a copy of the graph made by
  // Boost.Graph re-adds edges in another order), so a wrong hint costs time, never correctness.
  std::uint32_t out_position = 0;
};

// Where memory planning put a value.
struct buffer_slot {
  std::int32_t mem_id = 0;
  std::int64_t offset = 0;
};

// How a copy a pass makes is named, for models whose vertices have names (others ignore it):
// after the value it copies ("x@d2h"), after the value and the device it copies to
// ("x@h2d[cuda:0]"), or after the use it feeds ("k@h2d.2": slot 2 of node k).
enum class copy_naming : std::uint8_t { after_value, after_value_and_device, after_use };

// What add_copy makes: a vertex of copy kind `kind` whose device side is `side`, with one
// output laid out as `source` (its dtype and shape) and marked on the device the copy writes
// (`side`, or cpu for a d2h_copy), no planned buffer. The pass connects it to `source`.
// `resident`: the copy is made once, when the method is loaded, and its value stays where it put
// it for every execution (a copy of a constant; docs/device-propagation.md, "Constants where they
// are read"). A model that has no `resident` operation cannot store it and makes an ordinary copy,
// made on every execution: the graph stays correct, only the bytes are moved each time.
struct copy_request {
  op_kind kind = op_kind::h2d_copy;
  device side{};
  value_ref source{};
  copy_naming naming = copy_naming::after_value;
  use site{};  // the use it feeds, for copy_naming::after_use
  bool resident = false;
};

// What add_node makes, for models that can make any node (an optional operation: the graph
// builder's build_as<G> needs it): a vertex of role `role` on device `on`, named `name` (models
// without names may ignore it), running `op` (a delegate's or call's op: devpass::graph's
// kernel, a compiler's own op name), with attributes `attrs` (minified JSON, or empty), and one
// value per entry of `outputs`, laid out as that spec (dtype, shape: bytes) and marked on its
// device where the spec has one. No operands (devpass connects them) and no planned buffer.
// `named_after`: a node a pass made this one from; a model that keeps unique names derives this
// node's from that node's (`name` then starts with that node's name and an '@', as copies do).
// `resident`: a copy made once, at load (copy_request::resident), for models that store it.
struct node_request {
  op_kind role = op_kind::call;
  device on{};
  std::string_view name{};
  std::string_view op{};
  std::string_view attrs{};
  std::span<const tensor_spec> outputs{};
  std::optional<vertex> named_after{};
  bool resident = false;
};

// Specialize for a graph type to make it a model (see the header comment).
template <class G>
struct graph_model {
  static constexpr bool unspecialized = true;
};

namespace detail {
namespace boost_container_traits {
using boost::graph_detail::container_category;
// How Boost.Graph's own functions (add_edge, in the copy constructor too) see the list: a
// random-access sequence they append to (the overload for std::vector is Boost's, one for another
// container is found by argument-dependent lookup, as inline_edges.hpp's).
template <class List>
concept random_access_back_insertion = requires(const List& list) {
  requires std::derived_from<decltype(container_category(list)), boost::graph_detail::random_access_container_tag>;
  requires std::derived_from<decltype(container_category(list)), boost::graph_detail::back_insertion_sequence_tag>;
};
}  // namespace boost_container_traits
}  // namespace detail

// A vertex's out- or in-edge list as devpass changes it (structure_mutation.hpp): entries read by
// index, the last one moved into a removed one's place and popped, entries appended in place, one
// erased, all cleared; and a random-access sequence to Boost.Graph. std::vector (vecS) is one,
// inline_vector (inline_vec_s<N>) another.
template <class List>
concept random_access_edge_list = std::ranges::random_access_range<List> && std::ranges::sized_range<List> &&
    requires(List& list, typename List::value_type entry, typename List::iterator at, std::size_t i) {
  { list[i] } -> std::same_as<typename List::value_type&>;
  { list.back() } -> std::same_as<typename List::value_type&>;
  list.emplace_back(std::move(entry));
  list.pop_back();
  list.erase(at);
  list.clear();
} && detail::boost_container_traits::random_access_back_insertion<List>;

namespace detail {
// The storage the concept admits: vecS vertices and edges, bidirectionalS, and per-vertex edge
// lists that are random_access_edge_lists allowing parallel edges (two slots may read one value).
template <class G>
struct adjacency_storage : std::false_type {};
template <class OutEdgeListS, class V, class E, class GP>
struct adjacency_storage<
    boost::adjacency_list<OutEdgeListS, boost::vecS, boost::bidirectionalS, V, E, GP, boost::vecS>> {
  using G = boost::adjacency_list<OutEdgeListS, boost::vecS, boost::bidirectionalS, V, E, GP, boost::vecS>;
  using edge_list = std::remove_cvref_t<decltype(std::declval<typename G::stored_vertex&>().m_out_edges)>;
  static constexpr bool value =
      random_access_edge_list<edge_list> &&
      std::same_as<typename boost::graph_traits<G>::edge_parallel_category, boost::allow_parallel_edge_tag>;
};

template <class G>
struct no_rewrite_state {
  explicit no_rewrite_state(G&) {}
};
template <class G>
struct rewrite_state_of {
  using type = no_rewrite_state<G>;
};
template <class G>
requires requires { typename graph_model<G>::rewrite_state; }
struct rewrite_state_of<G> {
  using type = typename graph_model<G>::rewrite_state;
};
}  // namespace detail

// The three numbers devpass keeps on every edge: which value of its source it carries (output),
// which input slot of its target it feeds (slot) and where it sits in its source's out-edge list
// (position: edge_info's out_position). Read through the model, as Boost.Graph reads bundled
// properties through pointers to members: a model whose edge bundle is its own names them,
//   static constexpr auto edge_output = &my_edge::result;      // std::uint32_t my_edge::*
//   static constexpr auto edge_slot = &my_edge::operand;
//   static constexpr auto edge_position = &my_edge::position_hint;
// else they are the bundle's members output, slot and out_position (devpass::edge_info).
namespace detail {
template <class G, class E = typename G::edge_property_type>
concept model_names_edge_fields = requires {
  requires std::same_as<std::remove_cvref_t<decltype(graph_model<G>::edge_output)>, std::uint32_t E::*>;
  requires std::same_as<std::remove_cvref_t<decltype(graph_model<G>::edge_slot)>, std::uint32_t E::*>;
  requires std::same_as<std::remove_cvref_t<decltype(graph_model<G>::edge_position)>, std::uint32_t E::*>;
};
template <class E>
concept edge_info_fields = requires {
  requires std::same_as<decltype(&E::output), std::uint32_t E::*>;
  requires std::same_as<decltype(&E::slot), std::uint32_t E::*>;
  requires std::same_as<decltype(&E::out_position), std::uint32_t E::*>;
};
}  // namespace detail
template <class G>
struct edge_fields {
  using bundle = typename G::edge_property_type;
  static constexpr std::uint32_t bundle::*output = [] {
    if constexpr (detail::model_names_edge_fields<G>)
      return graph_model<G>::edge_output;
    else
      return &bundle::output;
  }();
  static constexpr std::uint32_t bundle::*slot = [] {
    if constexpr (detail::model_names_edge_fields<G>)
      return graph_model<G>::edge_slot;
    else
      return &bundle::slot;
  }();
  static constexpr std::uint32_t bundle::*position = [] {
    if constexpr (detail::model_names_edge_fields<G>)
      return graph_model<G>::edge_position;
    else
      return &bundle::out_position;
  }();
};
// An edge's numbers, through edge_fields: what devpass's own code reads.
template <class G>
[[nodiscard]] constexpr std::uint32_t edge_output(const G& g, const typename G::edge_descriptor& e) {
  return g[e].*edge_fields<G>::output;
}
template <class G>
[[nodiscard]] constexpr std::uint32_t edge_slot(const G& g, const typename G::edge_descriptor& e) {
  return g[e].*edge_fields<G>::slot;
}

// Per rewrite run state of a model (graph_model<G>::rewrite_state, or nothing).
template <class G>
using rewrite_state_t = typename detail::rewrite_state_of<G>::type;

namespace detail {
template <class G>
struct no_rewrite_seed {
  constexpr void add(const G&, vertex) const {}
};
template <class State, class G>
consteval auto rewrite_seed_of() {
  if constexpr (requires { typename State::seed; })
    return std::type_identity<typename State::seed>{};
  else
    return std::type_identity<no_rewrite_seed<G>>{};
}
}  // namespace detail

// What a sweep over every live node (`add(g, v)`, in vertex order) can gather for the rewrite
// states made after it, so that they need not read every node again: rewrite_state::seed, where
// the state is constructible from (G&, seed) (devpass::graph: its ids' suffixes); else nothing.
template <class G>
using rewrite_seed_t = typename decltype(detail::rewrite_seed_of<rewrite_state_t<G>, G>())::type;

// A rewrite state, from the seed where there is one and the model takes it.
template <class G>
rewrite_state_t<G> make_rewrite_state(G& g, const rewrite_seed_t<G>* seed) {
  if constexpr (std::is_constructible_v<rewrite_state_t<G>, G&, const rewrite_seed_t<G>&>)
    if (seed) return rewrite_state_t<G>(g, *seed);
  return rewrite_state_t<G>(g);
}

// The concept, one requirement per operation (named so that check_graph_model can say which
// one a type misses). Boost.Graph's concept checks are the model: the concept is what a user
// constrains their own templates with, the check is what devpass's entry points assert.
namespace model_requirements {
template <class G>
concept adjacency_list_storage = detail::adjacency_storage<G>::value;
template <class G>
concept specialized = !requires {
  graph_model<G>::unspecialized;
};
template <class G>
concept edge_numbers = detail::model_names_edge_fields<G> || detail::edge_info_fields<typename G::edge_property_type>;
template <class G, class M = graph_model<G>>
concept role = requires(const G& g, vertex v) {
  { M::role(g, v) } -> std::same_as<op_kind>;
};
template <class G, class M = graph_model<G>>
concept erased = requires(const G& g, vertex v) {
  { M::erased(g, v) } -> std::convertible_to<bool>;
};
template <class G, class M = graph_model<G>>
concept mark_erased = requires(G& g, vertex v) {
  M::mark_erased(g, v);
};
template <class G, class M = graph_model<G>>
concept arity = requires(const G& g, vertex v) {
  { M::arity(g, v) } -> std::convertible_to<std::uint32_t>;
};
template <class G, class M = graph_model<G>>
concept set_arity = requires(G& g, vertex v) {
  M::set_arity(g, v, std::uint32_t{});
};
template <class G, class M = graph_model<G>>
concept output_count = requires(const G& g, vertex v) {
  { M::output_count(g, v) } -> std::convertible_to<std::uint32_t>;
};
template <class G, class M = graph_model<G>>
concept node_device = requires(const G& g, vertex v) {
  { M::node_device(g, v) } -> std::same_as<device>;
};
template <class G, class M = graph_model<G>>
concept marked_device = requires(const G& g, value_ref x) {
  { M::marked_device(g, x) } -> std::same_as<std::optional<device>>;
};
template <class G, class M = graph_model<G>>
concept mark_device = requires(G& g, value_ref x) {
  M::mark_device(g, x, device{});
};
template <class G, class M = graph_model<G>>
concept value_dtype = requires(const G& g, value_ref x) {
  { M::value_dtype(g, x) } -> std::same_as<dtype>;
};
template <class G, class M = graph_model<G>>
concept value_bytes = requires(const G& g, value_ref x) {
  { M::value_bytes(g, x) } -> std::convertible_to<std::uint64_t>;
};
template <class G, class M = graph_model<G>>
concept name = requires(const G& g, vertex v) {
  { M::name(g, v) } -> std::convertible_to<std::string_view>;
};
template <class G, class M = graph_model<G>>
concept add_copy = requires(G& g, rewrite_state_t<G>& s, const copy_request& r) {
  { M::add_copy(g, s, r) } -> std::convertible_to<vertex>;
}
|| requires(G& g, const copy_request& r) {
  { M::add_copy(g, r) } -> std::convertible_to<vertex>;
};
// Optional: a model that can make any node (node_request), with its rewrite state or without.
template <class G, class M = graph_model<G>>
concept add_node = requires(G& g, const node_request& r) {
  { M::add_node(g, r) } -> std::convertible_to<vertex>;
};
template <class G, class M = graph_model<G>>
concept add_node_with_state = add_node<G, M> || requires(G& g, rewrite_state_t<G>& s, const node_request& r) {
  { M::add_node(g, s, r) } -> std::convertible_to<vertex>;
};
template <class G, class M = graph_model<G>>
concept set_buffer = requires(G& g, value_ref x) {
  M::set_buffer(g, x, std::optional<buffer_slot>{});
};
}  // namespace model_requirements

// G is a graph devpass's patterns, rules, pipelines and passes run on.
template <class G>
concept modeled_graph = model_requirements::adjacency_list_storage<G> && model_requirements::specialized<G> &&
    model_requirements::edge_numbers<G> && model_requirements::role<G> && model_requirements::erased<G> &&
    model_requirements::mark_erased<G> && model_requirements::arity<G> && model_requirements::set_arity<G> &&
    model_requirements::output_count<G> && model_requirements::node_device<G> && model_requirements::marked_device<G> &&
    model_requirements::mark_device<G> && model_requirements::value_dtype<G> && model_requirements::value_bytes<G> &&
    model_requirements::name<G> && model_requirements::add_copy<G>;
// ... and one plan_memory can write buffers into.
template <class G>
concept plannable_graph = modeled_graph<G> && model_requirements::set_buffer<G>;

// modeled_graph<G>, asserted one requirement at a time so that the first error line names the
// operation a type lacks. Called at every entry point (the driver, the passes, the planner), so
// a user's first error line says what their model lacks, not where deep inside devpass it was
// needed.
template <class G>
consteval bool check_graph_model() {
  namespace req = model_requirements;
  static_assert(req::adjacency_list_storage<G>,
                "devpass: the graph type must be boost::adjacency_list<OutEdgeListS, vecS, bidirectionalS, V, E, GP, "
                "vecS> with OutEdgeListS vecS or another random-access edge list allowing parallel edges "
                "(devpass::inline_vec_s<N>; docs/graph-concept.md says why)");
  static_assert(req::specialized<G>,
                "devpass: no devpass::graph_model specialization for this graph type (graph_model.hpp)");
  static_assert(req::edge_numbers<G>,
                "devpass: the edge bundle E needs three std::uint32_t members, output, slot and out_position "
                "(devpass::edge_info), or the graph_model names its own: static constexpr auto edge_output = "
                "&E::..., edge_slot = &E::..., edge_position = &E::...;");
  static_assert(req::role<G>, "devpass: graph_model lacks `static op_kind role(const G&, vertex)`");
  static_assert(req::erased<G>, "devpass: graph_model lacks `static bool erased(const G&, vertex)`");
  static_assert(req::mark_erased<G>, "devpass: graph_model lacks `static void mark_erased(G&, vertex)`");
  static_assert(req::arity<G>, "devpass: graph_model lacks `static std::uint32_t arity(const G&, vertex)`");
  static_assert(req::set_arity<G>, "devpass: graph_model lacks `static void set_arity(G&, vertex, std::uint32_t)`");
  static_assert(req::output_count<G>,
                "devpass: graph_model lacks `static std::uint32_t output_count(const G&, vertex)`");
  static_assert(req::node_device<G>, "devpass: graph_model lacks `static device node_device(const G&, vertex)`");
  static_assert(req::marked_device<G>,
                "devpass: graph_model lacks `static std::optional<device> marked_device(const G&, value_ref)`");
  static_assert(req::mark_device<G>, "devpass: graph_model lacks `static void mark_device(G&, value_ref, device)`");
  static_assert(req::value_dtype<G>, "devpass: graph_model lacks `static dtype value_dtype(const G&, value_ref)`");
  static_assert(req::value_bytes<G>,
                "devpass: graph_model lacks `static std::uint64_t value_bytes(const G&, value_ref)`");
  static_assert(req::name<G>,
                "devpass: graph_model lacks `static name(const G&, vertex)` returning a string or string_view");
  static_assert(req::add_copy<G>,
                "devpass: graph_model lacks `static vertex add_copy(G&, const copy_request&)` "
                "(or add_copy(G&, rewrite_state&, const copy_request&))");
  return modeled_graph<G>;
}

// The planner's extra requirement, asserted likewise.
template <class G>
consteval bool check_plannable_graph_model() {
  static_assert(model_requirements::set_buffer<G>,
                "devpass: graph_model lacks `static void set_buffer(G&, value_ref, std::optional<buffer_slot>)`, "
                "which plan_memory needs");
  return plannable_graph<G>;
}

// The operations, as free functions over any model (what devpass's own code calls).
template <class G>
[[nodiscard]] constexpr op_kind role_of(const G& g, vertex v) {
  return graph_model<G>::role(g, v);
}
template <class G>
[[nodiscard]] constexpr bool is_erased(const G& g, vertex v) {
  return graph_model<G>::erased(g, v);
}
template <class G>
[[nodiscard]] constexpr std::uint32_t arity_of(const G& g, vertex v) {
  return graph_model<G>::arity(g, v);
}
template <class G>
[[nodiscard]] constexpr std::uint32_t output_count(const G& g, vertex v) {
  return graph_model<G>::output_count(g, v);
}
template <class G>
[[nodiscard]] constexpr device node_device(const G& g, vertex v) {
  return graph_model<G>::node_device(g, v);
}
template <class G>
[[nodiscard]] constexpr std::optional<device> marked_device(const G& g, value_ref x) {
  return graph_model<G>::marked_device(g, x);
}
template <class G>
constexpr void mark_device(G& g, value_ref x, device d) {
  graph_model<G>::mark_device(g, x, d);
}
template <class G>
[[nodiscard]] constexpr dtype value_dtype(const G& g, value_ref x) {
  return graph_model<G>::value_dtype(g, x);
}
template <class G>
[[nodiscard]] constexpr std::uint64_t value_bytes(const G& g, value_ref x) {
  return graph_model<G>::value_bytes(g, x);
}
template <class G>
[[nodiscard]] constexpr decltype(auto) node_name(const G& g, vertex v) {
  return graph_model<G>::name(g, v);
}
namespace detail {
// What the passes take from add_copy's contract without looking again (the fused paths mark no
// copy): the copy's one value is marked where the copy writes it. Checked in debug builds.
template <class G>
vertex checked_copy([[maybe_unused]] const G& g, vertex copy, [[maybe_unused]] const copy_request& r) {
  assert(output_count(g, copy) == 1 &&
         marked_device(g, value_ref{copy, 0}) == (r.kind == op_kind::d2h_copy ? cpu_device : r.side) &&
         "devpass: graph_model::add_copy must mark the copy's value where the copy writes it");
  return copy;
}
}  // namespace detail

template <class G>
vertex add_copy_vertex(G& g, rewrite_state_t<G>& state, const copy_request& r) {
  if constexpr (requires { graph_model<G>::add_copy(g, state, r); })
    return detail::checked_copy(g, graph_model<G>::add_copy(g, state, r), r);
  else
    return detail::checked_copy(g, graph_model<G>::add_copy(g, r), r);
}
// The rewrite state a model's add_copy may take instead of its own where every candidate id is
// free: each candidate as it is (devpass::graph's add_copy takes either).
struct candidate_ids {
  static std::string make_derived(vertex, std::string candidate) { return candidate; }
};
// Whether the copies a caller is about to make may take their candidate ids as they are: asked of
// a state that can tell (id_allocator::candidates_free), for a caller whose candidates differ
// from each other (one copy per delegate slot, or per value and device). False for any other.
template <class G>
[[nodiscard]] bool candidates_free(rewrite_state_t<G>& state) {
  if constexpr (requires { state.candidates_free(); })
    return state.candidates_free();
  else
    return false;
}
// add_copy_vertex, the copy named with its candidate id as it is where candidates_free said so
// and the model's add_copy takes candidate_ids.
template <class G>
vertex add_copy_vertex(G& g, rewrite_state_t<G>& state, const copy_request& r, bool candidate_is_free) {
  if constexpr (requires(candidate_ids as_asked) { graph_model<G>::add_copy(g, as_asked, r); }) {
    if (candidate_is_free) {
      candidate_ids as_asked;
      return detail::checked_copy(g, graph_model<G>::add_copy(g, as_asked, r), r);
    }
  }
  return add_copy_vertex(g, state, r);
}
// A node made through the model (node_request), with the rewrite state where its add_node takes one.
template <class G>
vertex add_node_vertex(G& g, rewrite_state_t<G>& state, const node_request& r) {
  if constexpr (requires { graph_model<G>::add_node(g, state, r); })
    return graph_model<G>::add_node(g, state, r);
  else
    return graph_model<G>::add_node(g, r);
}
// Whether copy v is resident: made once, when the method is loaded, rather than on every
// execution (copy_request::resident). The model's optional `static bool resident(const G&,
// vertex)`; false in a model without it, whose copies are all made on every execution.
template <class G>
[[nodiscard]] constexpr bool is_resident(const G& g, vertex v) {
  if constexpr (requires {
                  { graph_model<G>::resident(g, v) } -> std::convertible_to<bool>;
                })
    return graph_model<G>::resident(g, v);
  else
    return false;
}

// Keeps a source's (input's or constant's) own device in step with its value, in models that
// store one (devpass::graph: the file format's input device is where the caller provides it).
template <class G>
constexpr void set_source_device(G& g, vertex v, device d) {
  if constexpr (requires { graph_model<G>::set_node_device(g, v, d); }) graph_model<G>::set_node_device(g, v, d);
}

}  // namespace devpass
