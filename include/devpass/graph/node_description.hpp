// devpass/graph/node_description.hpp — what a model may say about a node beyond the concept's
// required operations, for guards (pattern/value_guards.hpp). Each is optional; a guard that reads
// one on a model without it does not compile, and its first error line names the operation.
//
//   static op_traits traits(const G&, vertex)                       op traits (graph/op_traits.hpp)
//   static std::span<const std::int64_t> value_shape(const G&, value_ref)  a value's dimensions
//   static std::optional<std::string_view> attr(const G&, vertex, std::string_view key)
//                                       the JSON text of attribute `key` ("3", "\"float16\"", "[1,2]")
//   static T attrs(const G&, vertex)    all of them, one JSON object's text (T: a string or a view;
//                                       empty for none): what a result copies (attrs_of)
//
// devpass::graph has all four: traits from its kernel names (aten_op_traits), the spec's shape,
// and its `attrs` object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/op_traits.hpp"

namespace devpass {

namespace model_requirements {
template <class G, class M = graph_model<G>>
concept traits = requires(const G& g, vertex v) {
  { M::traits(g, v) } -> std::convertible_to<op_traits>;
};
template <class G, class M = graph_model<G>>
concept value_shape = requires(const G& g, value_ref x) {
  { M::value_shape(g, x) } -> std::convertible_to<std::span<const std::int64_t>>;
};
template <class G, class M = graph_model<G>>
concept attr = requires(const G& g, vertex v, std::string_view key) {
  { M::attr(g, v, key) } -> std::convertible_to<std::optional<std::string_view>>;
};
template <class G, class M = graph_model<G>>
concept attrs_text = requires(const G& g, vertex v) {
  std::string_view(M::attrs(g, v));
};
}  // namespace model_requirements

template <class G>
[[nodiscard]] op_traits op_traits_of(const G& g, vertex v) {
  return graph_model<G>::traits(g, v);
}
template <class G>
[[nodiscard]] std::span<const std::int64_t> value_shape(const G& g, value_ref x) {
  return graph_model<G>::value_shape(g, x);
}
template <class G>
[[nodiscard]] std::optional<std::string_view> node_attr(const G& g, vertex v, std::string_view key) {
  return graph_model<G>::attr(g, v, key);
}

namespace detail {
// The end of the JSON value that starts at text[at] (minified: no whitespace between tokens), or
// npos when it does not end.
constexpr std::size_t json_value_end(std::string_view text, std::size_t at) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;  // the end of the enclosing object
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return depth == 0 && !in_string ? text.size() : std::string_view::npos;
}
}  // namespace detail

// The text of member `key` of a minified JSON object (devpass::graph's attrs), nullopt when the
// object has no such member. Keys are compared as written (no unescaping).
[[nodiscard]] constexpr std::optional<std::string_view> json_member(std::string_view object, std::string_view key) {
  if (object.size() < 2 || object.front() != '{') return std::nullopt;
  std::size_t at = 1;
  while (at < object.size() && object[at] == '"') {
    const std::size_t key_end = detail::json_value_end(object, at);
    if (key_end == std::string_view::npos || key_end >= object.size() || object[key_end] != ':') return std::nullopt;
    const std::string_view name = object.substr(at + 1, key_end - at - 2);
    const std::size_t value_end = detail::json_value_end(object, key_end + 1);
    if (value_end == std::string_view::npos) return std::nullopt;
    if (name == key) return object.substr(key_end + 1, value_end - key_end - 1);
    at = value_end + 1;  // past the ','
  }
  return std::nullopt;
}

}  // namespace devpass
