// devpass/rules/build_actions.hpp — result patterns: actions that build a node of the model's own
// kind from captures (MLIR's DRR result patterns, PDLL's `replace ... with`), on any model whose
// graph_model has add_node (graph_model.hpp, node_request).
//
//   result := build<"op">(a, b, ...)        a node running op "op", reading captures a, b, ... in
//                                           slots 0, 1, ...; one output
//             result.with_dtype<T>()        its output's dtype (else its template value's)
//             result.with_dtype(f)          f(ctx, build_site) -> dtype, computed per match
//             result.named<"suffix">()      its name: "<template node>@suffix" (else "@<op>")
//             result.attrs_of(c)            its attributes: those of c's node (a fused conv keeps
//                                           its stride), through the model's `attrs` (a model
//                                           with `attr` but no `attrs` does not compile; one
//                                           without attributes has none to copy)
//   action := replace(r, result)            the new node on r's node's device and role, its output
//                                           laid out as r (the template value); every use of r
//                                           reads it; r's node is erased when nothing reads it
//           | build_into_use(result)        on_use roots: the new node, on the device where its
//                                           operand a lives (a call on the host, a delegate on a
//                                           device), laid out as a, feeds the matched slot
//           | share_into_use(result)        the same, reusing a node of the same op, device and
//                                           output dtype that already reads the same operands:
//                                           one node per (operands, op, dtype), as copies are
//                                           one per (value, device)
// replace() of a value its node does not have (a value root matches value 0 of a node without
// outputs too) is a graph_error naming the node: guard such rules.
// The new node gets its id as copies do (unique, derived from the template node's name), is
// counted in the counters' nodes_added, and is revisited by the driver. A result that reads a
// capture the pattern does not bind, an into-use action on a root that is not on_use, and a
// build on a model without add_node do not compile; the first error line names the mistake.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/graph/node_description.hpp"
#include "devpass/graph/structure.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/pattern/capture.hpp"
#include "devpass/pattern/fixed_string.hpp"
#include "devpass/pattern/op_patterns.hpp"
#include "devpass/rules/actions.hpp"

namespace devpass::diagnostic {
template <class Graph>
struct this_graph_model_cannot_give_a_node_attributes_text;
}  // namespace devpass::diagnostic

namespace devpass::rules {

using pattern::fixed_string;

// What a result's dtype function sees: the template value the new node is laid out as, and the
// matched use for into-use actions.
struct build_site {
  value_ref like{};
  std::optional<devpass::use> site{};
};

namespace detail {
// The output dtype of a result: its template value's, a fixed one, or the user's function's.
struct like_template_dtype {
  template <class Ctx>
  dtype operator()(const Ctx& ctx, const build_site& s) const {
    return value_dtype(ctx.g, s.like);
  }
  static std::string describe() { return {}; }
};
template <dtype T>
struct fixed_dtype {
  template <class Ctx>
  dtype operator()(const Ctx&, const build_site&) const {
    return T;
  }
  static std::string describe() { return devpass::concat({".with_dtype<", to_string(T), ">()"}); }
};
template <class F>
struct computed_dtype {
  [[no_unique_address]] F f;
  template <class Ctx>
  dtype operator()(const Ctx& ctx, const build_site& s) const {
    return f(ctx, s);
  }
  static std::string describe() { return ".with_dtype(...)"; }
};

// The node's shape: the template's where the model has shapes, else the template's element
// count as one dimension (the model's bytes are then the count times the new dtype's size).
template <class G>
tensor_shape shape_like(const G& g, value_ref like) {
  if constexpr (model_requirements::value_shape<G>) {
    return tensor_shape(value_shape(g, like));
  } else {
    const auto count = static_cast<std::int64_t>(value_bytes(g, like) / element_size(value_dtype(g, like)));
    return tensor_shape(std::span<const std::int64_t>(&count, 1));
  }
}

// "<template node's name>@<suffix>", the suffix without what an id may not hold ('@', and ':'
// that would read as an output index).
template <class G>
std::string result_name(const G& g, vertex like, std::string_view suffix) {
  std::string name = devpass::concat({std::string_view(node_name(g, like)), "@", suffix});
  for (std::size_t i = name.find('@') + 1; i < name.size(); ++i)
    if (name[i] == '@' || name[i] == ':') name[i] = '_';
  return name;
}

template <class G>
constexpr void require_attribute_text() {
  if constexpr (!model_requirements::attrs_text<G>) {
    static_assert(diagnostic::report<diagnostic::this_graph_model_cannot_give_a_node_attributes_text<G>>());
    static_assert(model_requirements::attrs_text<G>,
                  "devpass: attrs_of(c) copies c's node's attributes: graph_model<G> needs `static attrs(const G&, "
                  "vertex)` returning their JSON text (graph/node_description.hpp)");
  }
}

template <class T, class...>
struct first_of {
  using type = T;
};

// The op's name checked against an enum vocabulary at compile time (a name it lacks is a compile
// error naming it: op_patterns.hpp).
template <class G, fixed_string Op>
constexpr void check_op_in_vocabulary() {
  if constexpr (pattern::has_op_vocabulary<G>)
    if constexpr (std::is_enum_v<pattern::op_type_t<G>>) (void)pattern::detail::enumerator_named<G, Op>();
}
}  // namespace detail

// No capture whose node's attributes the result copies.
struct no_attributes {};

template <fixed_string Op, class DType, fixed_string Suffix, class AttrsFrom, class... Operands>
struct build_t {
  static_assert(sizeof...(Operands) > 0, "devpass: build<\"op\">(a, ...) reads at least one capture");
  using uses = std::conditional_t<std::is_same_v<AttrsFrom, no_attributes>, type_list<Operands...>,
                                  type_list<Operands..., AttrsFrom>>;
  using first_operand = typename detail::first_of<Operands...>::type;
  [[no_unique_address]] DType output_dtype;

  template <dtype T>
  constexpr build_t<Op, detail::fixed_dtype<T>, Suffix, AttrsFrom, Operands...> with_dtype() const {
    return {};
  }
  template <class F>
  constexpr build_t<Op, detail::computed_dtype<F>, Suffix, AttrsFrom, Operands...> with_dtype(F f) const {
    return {{f}};
  }
  template <fixed_string Name>
  constexpr build_t<Op, DType, Name, AttrsFrom, Operands...> named() const {
    return {output_dtype};
  }
  template <fixed_string Name>
  constexpr build_t<Op, DType, Suffix, pattern::cap<Name>, Operands...> attrs_of(pattern::cap<Name>) const {
    return {output_dtype};
  }

  static constexpr std::string_view op() { return Op.view(); }
  static std::string describe() {
    std::string s = devpass::concat({"build<\"", Op.view(), "\">("});
    std::size_t i = 0;
    ((s.append(i++ ? ", " : "").append(Operands::name())), ...);
    if constexpr (!std::is_same_v<AttrsFrom, no_attributes>) s = devpass::concat({s, ").attrs_of(", AttrsFrom::name()});
    return devpass::concat({s, ")", DType::describe()});
  }

  // Makes the node (no operands yet): `role` on `on`, laid out as `like`.
  template <class Ctx, class Set>
  vertex make(Ctx& ctx, const Set& caps, op_kind role, device on, const build_site& s) const {
    using G = typename Ctx::graph_type;
    detail::check_op_in_vocabulary<G, Op>();
    tensor_spec spec{output_dtype(ctx, s), detail::shape_like(ctx.g, s.like)};
    spec.device = marked_device(ctx.g, s.like);
    const std::string name =
        detail::result_name(ctx.g, s.like.producer, Suffix.view().empty() ? Op.view() : Suffix.view());
    if constexpr (std::is_same_v<AttrsFrom, no_attributes>) {
      return ctx.add_node(node_request{role, on, name, Op.view(), {}, {&spec, 1}, s.like.producer});
    } else if constexpr (!model_requirements::attr<G> && !model_requirements::attrs_text<G>) {
      // A model that keeps no attributes has none to copy.
      return ctx.add_node(node_request{role, on, name, Op.view(), {}, {&spec, 1}, s.like.producer});
    } else {
      detail::require_attribute_text<G>();  // it keeps some (attr): they must not be lost
      const std::string attrs(std::string_view(graph_model<G>::attrs(ctx.g, caps.get(AttrsFrom{}).producer)));
      return ctx.add_node(node_request{role, on, name, Op.view(), attrs, {&spec, 1}, s.like.producer});
    }
  }
  // Connects the operands, slot by slot.
  template <class Ctx, class Set>
  void connect_operands(Ctx& ctx, const Set& caps, vertex made) const {
    std::uint32_t slot = 0;
    (connect(ctx.g, caps.get(Operands{}), made, slot++), ...);
    (ctx.touch(caps.get(Operands{}).producer), ...);
  }
  // Whether node c is such a node already: the op, the device, the dtype, the operands.
  template <class Ctx, class Set>
  bool built_as(const Ctx& ctx, const Set& caps, vertex c, device on, dtype type) const {
    const auto& g = ctx.g;
    if (is_erased(g, c) || !pattern::detail::has_op<Op>(g, c) || node_device(g, c) != on ||
        arity_of(g, c) != sizeof...(Operands) || output_count(g, c) != 1 || value_dtype(g, value_ref{c, 0}) != type)
      return false;
    std::uint32_t slot = 0;
    return ((operand(g, c, slot++) == std::optional<value_ref>(caps.get(Operands{}))) && ...);
  }
};

template <fixed_string Op, fixed_string... Names>
constexpr build_t<Op, detail::like_template_dtype, "", no_attributes, pattern::cap<Names>...> build(
    pattern::cap<Names>...) {
  return {};
}

template <class R, class Result>
struct replace_t : action_base<replace_t<R, Result>> {
  using uses = join_t<type_list<R>, typename Result::uses>;
  static constexpr bool erases = false;  // only when nothing else reads r: not surely
  [[no_unique_address]] Result result;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const value_ref old = caps.get(R{});
    const vertex was = old.producer;
    // A value root matches value 0 of every node, also of one without outputs: there is nothing
    // to lay the new node out as, nor to replace (guard the rule: same_dtype, dtype_is, ...).
    if (old.output >= output_count(ctx.g, was))
      throw graph_error("", display_name(ctx.g, was), "outputs",
                        devpass::concat({"replace(", R::name(), ", ...): the node has no output ",
                                         std::to_string(old.output), " to replace"}));
    const vertex made =
        result.make(ctx, caps, role_of(ctx.g, was), node_device(ctx.g, was), build_site{old, caps.site});
    ctx.touch_uses(old);
    replace_uses(ctx.g, old, value_ref{made, 0});
    result.connect_operands(ctx, caps, made);  // after the rewiring: an operand may be r itself
    if (!is_erased(ctx.g, was) && boost::out_degree(was, ctx.g) == 0) ctx.remove(was);
  }
  std::string describe() const { return devpass::concat({"replace(", R::name(), ", ", Result::describe(), ")"}); }
};
template <class R, class Result>
constexpr replace_t<R, Result> replace(R, Result result) {
  return {{}, result};
}

template <class Result, bool Share>
struct build_into_use_t : action_base<build_into_use_t<Result, Share>> {
  using uses = typename Result::uses;
  static constexpr bool erases = false;
  static constexpr bool needs_site = true;
  [[no_unique_address]] Result result;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const devpass::use site = caps.site.value();
    const value_ref x = caps.get(typename Result::first_operand{});
    const device on = location_of(ctx.g, x);
    const build_site where{x, site};
    std::optional<vertex> node;
    if constexpr (Share) {
      static_assert(pattern::has_op_vocabulary<typename Ctx::graph_type>,
                    "devpass: share_into_use finds the node it reuses by its op: graph_model<G> needs `op`");
      const dtype type = result.output_dtype(ctx, where);
      for_each_use(ctx.g, x, [&](devpass::use u) {
        if (!node && result.built_as(ctx, caps, u.consumer, on, type)) node = u.consumer;
      });
    }
    if (!node) {
      node = result.make(ctx, caps, on.is_host() ? op_kind::call : op_kind::delegate, on, where);
      result.connect_operands(ctx, caps, *node);
    }
    set_operand(ctx.g, site.consumer, site.slot, value_ref{*node, 0});
    ctx.touch(site.consumer);
  }
  std::string describe() const {
    return devpass::concat({Share ? "share_into_use(" : "build_into_use(", Result::describe(), ")"});
  }
};
template <class Result>
constexpr build_into_use_t<Result, false> build_into_use(Result result) {
  return {{}, result};
}
template <class Result>
constexpr build_into_use_t<Result, true> share_into_use(Result result) {
  return {{}, result};
}

}  // namespace devpass::rules
