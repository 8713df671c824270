// devpass/runtime/kernels/attrs.hpp — reading a kernel's scalar attributes from node::attrs.
//
// node::attrs holds the node's `attrs` object as minified JSON text, e.g. {"k":2,"eps":1e-06}.
// Kernels only need top-level numbers, so this is a key search, not a JSON parser: the value of
// "key" is the text after `"key":` up to the next ',' or '}'. A key that is absent gives the
// caller's default; a key whose value is not a number is an error naming the node and the key.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"

namespace devpass::runtime::kernels {

// The raw value text of top-level `key` in minified JSON object text, if present.
[[nodiscard]] inline std::optional<std::string_view> attr_text(std::string_view attrs, std::string_view key) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    const char c = attrs[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '{' || c == '[')
      ++depth;
    else if (c == '}' || c == ']')
      --depth;
    else if (c == '"') {
      // A key at depth 1 is a string followed by ':'.
      const std::size_t close = attrs.find('"', i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      const bool is_key = depth == 1 && close + 1 < attrs.size() && attrs[close + 1] == ':';
      if (is_key && attrs.substr(i + 1, close - i - 1) == key) {
        const std::size_t begin = close + 2;
        std::size_t end = begin;
        while (end < attrs.size() && attrs[end] != ',' && attrs[end] != '}') ++end;
        return attrs.substr(begin, end - begin);
      }
      if (attrs.substr(i + 1, close - i - 1).find('\\') == std::string_view::npos) {
        i = close;  // skip the whole (escape-free) string
      } else {
        in_string = true;
      }
    }
  }
  return std::nullopt;
}

namespace detail {
template <class T>
[[nodiscard]] T parse_attr(const node& n, std::string_view key, T fallback, const char* expected) {
  const auto text = attr_text(n.attrs, key);
  if (!text) return fallback;
  T value{};
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || end != text->data() + text->size())
    throw graph_error("", n.id, "attrs." + std::string(key),
                      std::string("expected ") + expected + ", got '" + std::string(*text) + "'");
  return value;
}
}  // namespace detail

// Integer attribute `key` of node n, or `fallback` when absent.
[[nodiscard]] inline std::int64_t attr_int(const node& n, std::string_view key, std::int64_t fallback) {
  return detail::parse_attr<std::int64_t>(n, key, fallback, "an integer");
}

// Floating attribute `key` of node n, or `fallback` when absent.
[[nodiscard]] inline double attr_float(const node& n, std::string_view key, double fallback) {
  return detail::parse_attr<double>(n, key, fallback, "a number");
}

}  // namespace devpass::runtime::kernels
