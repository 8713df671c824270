// devpass/pattern/value_guards.hpp — guards on what the model says about a captured node or
// value beyond its role (graph/node_description.hpp): op traits, shapes, attributes.
//
//   has_trait<op_trait::view>(x)     x's node declares the trait (view, pure, elementwise,
//                                    device_kernel: graph/op_traits.hpp)
//   rank_is<4>(x)                    x's value has 4 dimensions
//   shape_is<1, 3, 224, 224>(x)      x's value has exactly these dimensions
//   has_attr<"dim">(x)               x's node has attribute "dim"
//   attr_is<"reduce", "sum">(x)      ... and its text is `sum`, or the JSON string "sum"
// with dtype_is<T>(x) (guards.hpp), the guards TVM's has_dtype / has_shape / has_attr and XLA's
// WithShape write. Each reads an optional model operation; a rule using one on a model without
// it does not compile, and the first error line names the operation. These facts never change
// while a table runs (rules/independence.hpp relies on it).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "devpass/graph/node_description.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/pattern/guards.hpp"

namespace devpass::diagnostic {
template <class Graph>
struct this_graph_model_declares_no_op_traits;
template <class Graph>
struct this_graph_model_has_no_value_shapes;
template <class Graph>
struct this_graph_model_has_no_attributes;
}  // namespace devpass::diagnostic

namespace devpass::pattern {

namespace detail {
template <class G>
constexpr void require_traits() {
  if constexpr (!model_requirements::traits<G>) {
    static_assert(diagnostic::report<diagnostic::this_graph_model_declares_no_op_traits<G>>());
    static_assert(model_requirements::traits<G>,
                  "devpass: has_trait reads `static op_traits traits(const G&, vertex)` (graph/node_description.hpp)");
  }
}
template <class G>
constexpr void require_shapes() {
  if constexpr (!model_requirements::value_shape<G>) {
    static_assert(diagnostic::report<diagnostic::this_graph_model_has_no_value_shapes<G>>());
    static_assert(model_requirements::value_shape<G>,
                  "devpass: shape guards read `static std::span<const std::int64_t> value_shape(const G&, value_ref)` "
                  "(graph/node_description.hpp)");
  }
}
template <class G>
constexpr void require_attributes() {
  if constexpr (!model_requirements::attr<G>) {
    static_assert(diagnostic::report<diagnostic::this_graph_model_has_no_attributes<G>>());
    static_assert(model_requirements::attr<G>,
                  "devpass: attribute guards read `static std::optional<std::string_view> attr(const G&, vertex, "
                  "std::string_view)` (graph/node_description.hpp)");
  }
}
template <class Ctx>
using graph_of = std::remove_cvref_t<decltype(std::declval<const Ctx&>().g)>;

// Whether a value has a shape: a consumer capture of a node without outputs has none.
template <class G>
bool has_value(const G& g, value_ref a) {
  return a.output < output_count(g, a.producer);
}
// An attribute's text equals `wanted` as written, or is the JSON string of it.
constexpr bool attr_text_is(std::string_view text, std::string_view wanted) {
  if (text == wanted) return true;
  return text.size() == wanted.size() + 2 && text.front() == '"' && text.back() == '"' &&
         text.substr(1, wanted.size()) == wanted;
}
}  // namespace detail

template <op_trait Trait, class A>
constexpr auto has_trait(A) {
  return make_guard<"has_trait", A>([](const auto& ctx, value_ref a) {
    detail::require_traits<detail::graph_of<decltype(ctx)>>();
    return op_traits_of(ctx.g, a.producer).has(Trait);
  });
}

template <std::size_t Rank, class A>
constexpr auto rank_is(A) {
  return make_guard<"rank_is", A>([](const auto& ctx, value_ref a) {
    detail::require_shapes<detail::graph_of<decltype(ctx)>>();
    return detail::has_value(ctx.g, a) && value_shape(ctx.g, a).size() == Rank;
  });
}

template <std::int64_t... Dims, class A>
constexpr auto shape_is(A) {
  return make_guard<"shape_is", A>([](const auto& ctx, value_ref a) {
    detail::require_shapes<detail::graph_of<decltype(ctx)>>();
    if (!detail::has_value(ctx.g, a)) return false;
    constexpr std::array<std::int64_t, sizeof...(Dims)> wanted{Dims...};
    const auto shape = value_shape(ctx.g, a);
    return std::ranges::equal(shape, wanted);
  });
}

template <fixed_string Key, class A>
constexpr auto has_attr(A) {
  return make_guard<"has_attr", A>([](const auto& ctx, value_ref a) {
    detail::require_attributes<detail::graph_of<decltype(ctx)>>();
    return node_attr(ctx.g, a.producer, Key.view()).has_value();
  });
}

template <fixed_string Key, fixed_string Value, class A>
constexpr auto attr_is(A) {
  return make_guard<"attr_is", A>([](const auto& ctx, value_ref a) {
    detail::require_attributes<detail::graph_of<decltype(ctx)>>();
    const auto text = node_attr(ctx.g, a.producer, Key.view());
    return text && detail::attr_text_is(*text, Value.view());
  });
}

}  // namespace devpass::pattern
