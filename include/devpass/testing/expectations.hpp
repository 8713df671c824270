// devpass/testing/expectations.hpp — what the CHECK_* macros of testing.hpp check, as functions
// that return nullopt when the expectation holds and the failure message when it does not, so a
// test can check a message exactly without failing.
//
//   expect_matches(p, g, value)        pattern p matches value (a value_ref, or "id" / "id:k");
//                                      the message is explain(p, g, value) and the node's line
//   expect_not_matches(p, g, value)    it does not; the message lists what p captured
//   expect_copies(g, h2d, d2h, d2d)    g holds this many copy nodes of each kind, resident ones
//                                      (made once, at load) included; the message prints the
//                                      census and every copy node
//   expect_converges(table, g[, opts]) applying the rule table reaches a fixed point (no
//                                      rewrite_error) and a second run changes nothing (0
//                                      rewrites, the same graph); the message prints both runs'
//                                      counters, what the second run changed and the graph.
//                                      Leaves g as the table made it, to check further.
//   expect_same_graph(a, b)            graph_diff.hpp
// p is a value pattern (any, op, op(...), p.as(x)); root forms (each_output, on_use) and guarded
// patterns are rule roots, not values' patterns, and are refused at compile time.
// g is any graph model (graph_model.hpp): devpass::graph, or a compiler's own IR, whose nodes are
// named, printed and compared through its model (to_string.hpp, graph_diff.hpp).
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/rules.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "devpass/testing/graph_diff.hpp"
#include "devpass/testing/to_string.hpp"

namespace devpass::testing {

// The options of a rule table whose guards read none (`when` reads ctx.options).
struct no_options {};

template <class P, class G = graph>
concept value_pattern = requires(const P p, const G& g, value_ref v, pattern::capture_set<typename P::binds>& caps) {
  { p.match(g, v, caps) } -> std::convertible_to<bool>;
  { pattern::describe(p) } -> std::convertible_to<std::string>;
  { pattern::explain(p, g, v) } -> std::convertible_to<std::optional<std::string>>;
};

namespace detail {

// Every line of `text` indented by `by` spaces.
inline std::string indented(std::string_view text, std::size_t by) {
  const std::string pad(by, ' ');
  std::string out = pad;
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

template <class G, class... Caps>
std::string captures_text(const G& g, const pattern::capture_set<pattern::type_list<Caps...>>& caps) {
  std::string text;
  std::size_t i = 0;
  ((text += (i++ ? ", " : "") + std::string(Caps::name()) + " = " + to_string(g, caps.get(Caps{}))), ...);
  return text;
}

// Why `value` cannot be matched at all (not in the graph), or nullopt.
template <class G>
std::optional<std::string> not_a_value(const G& g, value_ref value) {
  if (value.producer < boost::num_vertices(g) && value.output < output_count(g, value.producer)) return std::nullopt;
  return "value " + to_string(g, value) + " is not a value of the graph";
}

template <class P>
std::string pattern_text(const P& p) {
  return devpass::concat({"pattern `", pattern::describe(p), "`"});
}

}  // namespace detail

template <class P, modeled_graph G>
[[nodiscard]] std::optional<std::string> expect_matches(const P& p, const G& g, value_ref value) {
  static_assert(value_pattern<P, G>,
                "devpass: CHECK_MATCHES takes a value pattern (any, an op, op(...), p.as(x)), not a rule root "
                "(each_output, on_use) or a guarded pattern");
  pattern::check_is_reads_bound<P>();
  if (auto why = detail::not_a_value(g, value)) return detail::pattern_text(p) + " cannot match: " + *why;
  pattern::capture_set<typename P::binds> caps;
  if (p.match(g, value, caps)) return std::nullopt;
  const auto why = pattern::explain(p, g, value);
  return detail::pattern_text(p) + " does not match " + to_string(g, value) + ": " +
         (why ? *why : std::string("explain() gives no reason (match and explain disagree)")) + "\n  at " +
         node_line(g, value.producer);
}

template <class P, modeled_graph G>
[[nodiscard]] std::optional<std::string> expect_not_matches(const P& p, const G& g, value_ref value) {
  static_assert(value_pattern<P, G>,
                "devpass: CHECK_NOT_MATCHES takes a value pattern (any, an op, op(...), p.as(x)), not a rule root "
                "(each_output, on_use) or a guarded pattern");
  if (auto why = detail::not_a_value(g, value)) return detail::pattern_text(p) + " cannot match: " + *why;
  pattern::capture_set<typename P::binds> caps;
  if (!p.match(g, value, caps)) return std::nullopt;
  std::string text = detail::pattern_text(p) + " matches " + to_string(g, value) + ", expected no match";
  if constexpr (!std::is_same_v<typename P::binds, pattern::type_list<>>)
    text += "\n  captures: " + detail::captures_text(g, caps);
  return text + "\n  at " + node_line(g, value.producer);
}

// The same with the value named as in files: "id" or "id:k".
template <class P, modeled_graph G>
[[nodiscard]] std::optional<std::string> expect_matches(const P& p, const G& g, std::string_view reference) {
  const auto value = find_value(g, reference);
  if (!value) return detail::pattern_text(p) + " cannot match: no node '" + std::string(reference) + "' in the graph";
  return expect_matches(p, g, *value);
}
template <class P, modeled_graph G>
[[nodiscard]] std::optional<std::string> expect_not_matches(const P& p, const G& g, std::string_view reference) {
  const auto value = find_value(g, reference);
  if (!value) return detail::pattern_text(p) + " cannot match: no node '" + std::string(reference) + "' in the graph";
  return expect_not_matches(p, g, *value);
}

template <modeled_graph G>
[[nodiscard]] std::optional<std::string> expect_copies(const G& g, std::size_t h2d, std::size_t d2h, std::size_t d2d) {
  const copy_census found = count_copies(g);
  // The copy nodes of each kind: the census counts resident copies apart, whatever their kind.
  std::size_t nodes[3] = {};
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (const op_kind op = role_of(g, v); !is_erased(g, v) && is_copy(op))
      ++nodes[op == op_kind::h2d_copy ? 0 : op == op_kind::d2h_copy ? 1 : 2];
  if (nodes[0] == h2d && nodes[1] == d2h && nodes[2] == d2d) return std::nullopt;
  std::string text = "copies: expected h2d " + std::to_string(h2d) + ", d2h " + std::to_string(d2h) + ", d2d " +
                     std::to_string(d2d) + "; found " + to_string(found);
  constexpr std::size_t shown = 40;
  std::size_t listed = 0;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
    if (is_erased(g, v) || !is_copy(role_of(g, v))) continue;
    if (listed++ == shown) {
      text += "\n  ... " + std::to_string(found.copies() - shown) + " more copies";
      break;
    }
    text += "\n  " + node_line(g, v);
  }
  return text;
}

// Runs `table` on g twice (see the header comment). Exceptions other than rewrite_error (a
// graph_error from an action, say) are not caught: the test reports them.
template <class Table, modeled_graph G, class Options = no_options>
[[nodiscard]] std::optional<std::string> expect_converges(const Table& table, G& g, const Options& options = {}) {
  rules::rewrite_counters first;
  try {
    rules::rewrite_context<Options, G, rules::tracing::on> ctx(g, options);
    first = rules::apply_rules(table, ctx);
  } catch (const rules::rewrite_error& e) {
    return "the rule table does not reach a fixed point: " + std::string(e.what()) + "\n  graph when it stopped:\n" +
           detail::indented(to_string(g), 4);
  }
  const G fixed_point = g;
  rules::rewrite_counters second;
  try {
    rules::rewrite_context<Options, G, rules::tracing::on> ctx(g, options);
    second = rules::apply_rules(table, ctx);
  } catch (const rules::rewrite_error& e) {
    return "the rule table stopped once but does not reach a fixed point when run again: " + std::string(e.what()) +
           "\n  run 1: " + to_string(first) + "\n  graph after run 1:\n" + detail::indented(to_string(fixed_point), 4);
  }
  const auto changed = expect_same_graph(fixed_point, g, "after run 1", "after run 2");
  if (second.rewrites == 0 && !changed) return std::nullopt;
  std::string text = "the rule table is not at a fixed point after one run: run 2 made " +
                     detail::plural(second.rewrites, "rewrite", "rewrites") + "\n  run 1: " + to_string(first) +
                     "\n  run 2: " + to_string(second);
  if (changed) text += "\n  what run 2 changed:\n" + detail::indented(*changed, 4);
  return text + "\n  graph after run 1:\n" + detail::indented(to_string(fixed_point), 4);
}

}  // namespace devpass::testing
