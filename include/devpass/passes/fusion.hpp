// devpass/passes/fusion.hpp — fusion by op names: a chain of kernels whose intermediate values
// nothing else reads becomes one node, on the same device and in the same role, reading the
// chain's inputs. One rule table, written with the DSL alone (docs/patterns.md), over any graph
// model with an op vocabulary and add_node, the op names the model's own (Names below):
//
//   relu(add(conv2d(x, w).as(c), b).as(a)).as(r)
//       [one_use(c) && one_use(a) && adds_unscaled(a) && same_dtype(a, r) && runs_with(c, r) && runs_with(a, r)]
//       / (replace(r, build<conv2d_add_relu>(x, w, b).attrs_of(c)), erase_if_dead(a), erase_if_dead(c))
//   gelu(add(linear(x, w).as(l), b).as(a)).as(r)
//       [one_use(l) && one_use(a) && adds_unscaled(a) && exact_gelu(r) && same_dtype(a, r) && runs_with(l, r)
//        && runs_with(a, r)]
//       / (replace(r, build<linear_add_gelu>(x, w, b).attrs_of(l)), erase_if_dead(a), erase_if_dead(l))
//   gelu(linear(x, w, b).as(l)).as(r) [one_use(l) && exact_gelu(r) && same_dtype(l, r) && runs_with(l, r)]
//       / (replace(r, build<linear_gelu>(x, w, b).attrs_of(l)), erase_if_dead(l))
//
// `add` takes its operands in either order (any_order): add(b, conv2d(x, w)) fuses too, and the
// fused node reads (x, w, b) either way. runs_with(a, b): the two nodes have the same role and
// device, so a chain split across devices (or between the host and a device) stays as it is.
// adds_unscaled, exact_gelu: the fused kernels add without ATen's alpha scale and apply the exact
// gelu (below). same_dtype: the activation keeps its operand's dtype (and has a value: a node that
// declares no output is not fused). The fused node is laid out as r (its dtype and shape), keeps the conv's
// or the linear's attributes (a stride, a padding: attrs_of) and is named "<r's node>@<fused op>".
//
// Names is a struct of op names: each op of the chain is a type ops<"name", "alias", ...>, matched
// by any of its names (`|`, pattern/alternatives.hpp), and each fused op a fixed_string. The
// default, graph_names, takes the short names of the model graphs (conv2d, add, relu, linear,
// gelu) and ATen's (aten.convolution.default, ...); a compiler's IR names its own vocabulary.
//
//   fuse_ops(g)                 runs the table on any model; returns its rewrite counters
//   fusion::fuse<Names>         the same as a pipeline phase ("fuse")
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

#include "devpass/pipeline/pipeline.hpp"
#include "devpass/pipeline/table_phase.hpp"
#include "devpass/rules.hpp"

namespace devpass::fusion {

using namespace devpass::dsl;
using pattern::fixed_string;

// One op of a chain, by any of its names (the first is tried first).
template <fixed_string First, fixed_string... Aliases>
struct ops {};

// The default names: the model graphs' short names and ATen's.
struct graph_names {
  using conv2d = ops<"conv2d", "aten.convolution.default">;
  using add = ops<"add", "aten.add.Tensor">;
  using relu = ops<"relu", "aten.relu.default">;
  using linear = ops<"linear", "aten.linear.default">;
  using gelu = ops<"gelu", "aten.gelu.default">;
  static constexpr fixed_string conv2d_add_relu = "fused.conv2d_add_relu";
  static constexpr fixed_string linear_add_gelu = "fused.linear_add_gelu";
  static constexpr fixed_string linear_gelu = "fused.linear_gelu";
};

namespace detail {
template <class Ops>
struct alternatives;
template <fixed_string First, fixed_string... Aliases>
struct alternatives<ops<First, Aliases...>> {
  // op<First>(ps...) | op<Alias>(ps...) | ...
  template <class... Ps>
  static constexpr auto with(Ps... ps) {
    if constexpr (sizeof...(Aliases) == 0)
      return op<First>(ps...);
    else
      return op<First>(ps...) | alternatives<ops<Aliases...>>::with(ps...);
  }
  // any_order(op<First>, p, q) | any_order(op<Alias>, p, q) | ...
  template <class P, class Q>
  static constexpr auto either_order(P p, Q q) {
    if constexpr (sizeof...(Aliases) == 0)
      return any_order(op<First>, p, q);
    else
      return any_order(op<First>, p, q) | alternatives<ops<Aliases...>>::either_order(p, q);
  }
};
}  // namespace detail

// A node running one of Ops' names, with these operand patterns.
template <class Ops, class... Ps>
constexpr auto one_of(Ps... ps) {
  return detail::alternatives<Ops>::with(ps...);
}
// The same for a commutative op of two operands, in either order.
template <class Ops, class P, class Q>
constexpr auto one_of_any_order(P p, Q q) {
  return detail::alternatives<Ops>::either_order(p, q);
}

// Nodes a and b have the same role and run on the same device.
template <class A, class B>
constexpr auto runs_with(A, B) {
  return make_guard<"runs_with", A, B>([](const auto& ctx, value_ref a, value_ref b) {
    return role_of(ctx.g, a.producer) == role_of(ctx.g, b.producer) &&
           node_device(ctx.g, a.producer) == node_device(ctx.g, b.producer);
  });
}

// The fused kernels add b as it is and apply the exact gelu, so a chain whose add scales its
// second operand (ATen's add.Tensor computes x + alpha * y) or whose gelu approximates
// (ATen's gelu with approximate="tanh") stays as it is. A model without attributes has neither.
namespace detail {
// Whether an attribute's JSON text is the number 1 (1, 1.0, 1e0, ...).
inline bool is_number_one(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size() && value == 1.0;
}
// Whether an attribute's text is the JSON string "none".
inline bool is_none(std::string_view text) { return pattern::detail::attr_text_is(text, "none"); }

// Guard Name: a's node has no attribute Key, or one whose text Accepts.
template <fixed_string Name, fixed_string Key, bool (*Accepts)(std::string_view), class A>
constexpr auto absent_or(A) {
  return make_guard<Name, A>([](const auto& ctx, value_ref a) {
    if constexpr (!model_requirements::attr<pattern::detail::graph_of<decltype(ctx)>>) {
      return true;
    } else {
      const std::optional<std::string_view> text = node_attr(ctx.g, a.producer, Key.view());
      return !text || Accepts(*text);
    }
  });
}
}  // namespace detail

// a's node has no `alpha` attribute, or alpha 1.
template <class A>
constexpr auto adds_unscaled(A a) {
  return detail::absent_or<"adds_unscaled", "alpha", detail::is_number_one>(a);
}

// r's node has no `approximate` attribute, or approximate "none".
template <class R>
constexpr auto exact_gelu(R r) {
  return detail::absent_or<"exact_gelu", "approximate", detail::is_none>(r);
}

inline constexpr auto x = "x"_c;
inline constexpr auto w = "w"_c;
inline constexpr auto b = "b"_c;
inline constexpr auto c = "c"_c;
inline constexpr auto l = "l"_c;
inline constexpr auto a = "a"_c;
inline constexpr auto r = "r"_c;

// The chains, by Names' ops: relu(add(conv2d(x, w), b)), gelu(add(linear(x, w), b)), gelu(linear(x, w, b)).
template <class Names>
inline constexpr auto conv2d_add_relu_chain = one_of<typename Names::relu>(
    one_of_any_order<typename Names::add>(one_of<typename Names::conv2d>(any.as(x), any.as(w)).as(c), any.as(b)).as(a));
template <class Names>
inline constexpr auto linear_add_gelu_chain = one_of<typename Names::gelu>(
    one_of_any_order<typename Names::add>(one_of<typename Names::linear>(any.as(x), any.as(w)).as(l), any.as(b)).as(a));
template <class Names>
inline constexpr auto linear_gelu_chain =
    one_of<typename Names::gelu>(one_of<typename Names::linear>(any.as(x), any.as(w), any.as(b)).as(l));

template <class Names>
inline constexpr auto table = make_table(
    conv2d_add_relu_chain<Names>.as(
        r)[one_use(c) && one_use(a) && adds_unscaled(a) && same_dtype(a, r) && runs_with(c, r) && runs_with(a, r)] /
        (replace(r, build<Names::conv2d_add_relu>(x, w, b).attrs_of(c)), erase_if_dead(a), erase_if_dead(c)),
    linear_add_gelu_chain<Names>.as(r)[one_use(l) && one_use(a) && adds_unscaled(a) && exact_gelu(r) &&
                                       same_dtype(a, r) && runs_with(l, r) && runs_with(a, r)] /
        (replace(r, build<Names::linear_add_gelu>(x, w, b).attrs_of(l)), erase_if_dead(a), erase_if_dead(l)),
    linear_gelu_chain<Names>.as(r)[one_use(l) && exact_gelu(r) && same_dtype(l, r) && runs_with(l, r)] /
        (replace(r, build<Names::linear_gelu>(x, w, b).attrs_of(l)), erase_if_dead(l)));

// The table reads no options.
struct no_options {};

template <class Names = graph_names>
struct fuse : pipeline::table_phase<"fuse", table<Names>, pipeline::type_list<>, pipeline::type_list<>> {
  static constexpr std::string_view description =
      "fuse conv2d+add+relu, linear+add+gelu and linear+gelu chains into one node each";
};

}  // namespace devpass::fusion

namespace devpass {

// The chains fused on any graph model with an op vocabulary and add_node; the rewrite counters
// (rewrites: the chains fused, nodes_added one each, nodes_removed the nodes they replaced).
template <class Names = fusion::graph_names, class G>
rewrite_counters fuse_ops(G& g) {
  static_assert(check_graph_model<G>());
  const fusion::no_options options;
  rules::rewrite_context<fusion::no_options, G> ctx(g, options);
  return rules::apply_rules(fusion::table<Names>, ctx);
}

}  // namespace devpass
