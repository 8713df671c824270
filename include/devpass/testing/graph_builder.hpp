// devpass/testing/graph_builder.hpp — a graph in a few lines, for tests:
//
//   auto g = testing::graph_builder{}
//                .input("x", {2, 2})                          // float32 unless given: {{4}, dtype::int64}
//                .delegate("a", "cuda:0", "relu", {"x"})      // one output, the layout of its operand 0
//                .delegate("s", "cuda:0", "split", {"a"}, {{2, 1}, {2, 1}})  // or the outputs given
//                .call("b", "add", {"s:0", "x"})              // "id:k" reads output k
//                .output({"b", "s:1"})
//                .build();
//
// Nodes are added in the order written (their vertex numbers); references are resolved in build(),
// so a node may read one written after it (as the copies a pass appends are read by earlier
// nodes). Devices are parsed by parse_device ("cpu", "cuda", "cuda:1"); an input's or constant's
// device is where it is provided. Specs carry dtype and shape only, unless annotate_devices()
// asks build() to write every value's device into its spec, as propagate_device leaves a graph.
// Misuse is a graph_error naming the node and the field: a bad device at the call, an unknown or
// out-of-range reference, a duplicate id, a layout that cannot be inferred in build(), and
// anything verify_structure finds (build_unchecked() skips that, to make bad graphs on purpose).
// build_as<G>() makes the same graph in any model whose graph_model has add_node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify.hpp"

namespace devpass::testing {

// dtype and shape of one value: {2, 2} is float32[2,2], {{4}, dtype::int64} is int64[4], {} a scalar.
struct layout {
  devpass::dtype type = devpass::dtype::float32;
  std::vector<std::int64_t> shape;
  layout(std::initializer_list<std::int64_t> dims, devpass::dtype t = devpass::dtype::float32) : type(t), shape(dims) {}
  layout(std::vector<std::int64_t> dims, devpass::dtype t = devpass::dtype::float32)
      : type(t), shape(std::move(dims)) {}
  [[nodiscard]] tensor_spec spec() const { return tensor_spec{type, shape}; }
};

// The first live node of g named `name`, in vertex order (any graph model).
template <class G>
[[nodiscard]] std::optional<vertex> find_node_named(const G& g, std::string_view name) {
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (!is_erased(g, v) && std::string_view(node_name(g, v)) == name) return v;
  return std::nullopt;
}

// The value a reference names: "id" is output 0, "id:k" output k. nullopt when no live node has
// that id (the output index is not checked: compare with outputs.size()).
[[nodiscard]] inline std::optional<value_ref> find_value(const graph& g, std::string_view reference) {
  std::string_view id = reference;
  std::uint32_t output = 0;
  if (ends_in_output_index(reference)) {
    const auto colon = reference.rfind(':');
    const std::string_view digits = reference.substr(colon + 1);
    if (digits.size() > 9) return std::nullopt;  // no node has that many outputs
    id = reference.substr(0, colon);
    output = static_cast<std::uint32_t>(std::stoul(std::string(digits)));
  }
  const auto v = find_node(g, id);
  if (!v) return std::nullopt;
  return value_ref{*v, output};
}
// The same in any other graph model, by node name (graph_model::name): the first live node so
// named.
template <modeled_graph G>
[[nodiscard]] std::optional<value_ref> find_value(const G& g, std::string_view reference) {
  std::string_view id = reference;
  std::uint32_t output = 0;
  if (const auto colon = reference.rfind(':'); ends_in_output_index(reference) && !find_node_named(g, reference)) {
    const std::string_view digits = reference.substr(colon + 1);
    if (digits.size() > 9) return std::nullopt;
    id = reference.substr(0, colon);
    output = static_cast<std::uint32_t>(std::stoul(std::string(digits)));
  }
  const auto v = find_node_named(g, id);
  if (!v) return std::nullopt;
  return value_ref{*v, output};
}

// The same, for tests that know the value is there: a graph_error naming it when it is not.
[[nodiscard]] inline value_ref value_of(const graph& g, std::string_view reference) {
  const auto value = find_value(g, reference);
  if (!value) throw graph_error("", std::string(reference), "", "no node with this id in the graph");
  if (value->output >= g[value->producer].outputs.size())
    throw graph_error("", g[value->producer].id, "outputs",
                      "no output " + std::to_string(value->output) + " (the node has " +
                          std::to_string(g[value->producer].outputs.size()) + ")");
  return *value;
}

class graph_builder {
 public:
  graph_builder& method(std::string name) {
    method_ = std::move(name);
    return *this;
  }
  // A method input, provided on `on` (the host unless given).
  graph_builder& input(std::string id, layout l, std::string_view on = "cpu") {
    return source(std::move(id), op_kind::input, l, on);
  }
  // A constant, living on `on` (the host unless given).
  graph_builder& constant(std::string id, layout l, std::string_view on = "cpu") {
    return source(std::move(id), op_kind::constant, l, on);
  }
  // A delegate on `on`; without `outputs` it has one, with the layout of its operand 0.
  graph_builder& delegate(std::string id, std::string_view on, std::string kernel, std::vector<std::string> inputs,
                          std::vector<layout> outputs = {}) {
    node n{.id = std::move(id), .op = op_kind::delegate, .kernel = std::move(kernel)};
    n.device = parse(n.id, on);
    return add_pending(std::move(n), std::move(inputs), std::move(outputs));
  }
  // A host call; outputs as for delegate.
  graph_builder& call(std::string id, std::string kernel, std::vector<std::string> inputs,
                      std::vector<layout> outputs = {}) {
    return add_pending(node{.id = std::move(id), .op = op_kind::call, .kernel = std::move(kernel)}, std::move(inputs),
                       std::move(outputs));
  }
  // Copies of `from`, with its layout. The device is the copy's device side: where an h2d_copy
  // copies to, where a d2h_copy copies from, where a d2d_copy copies to.
  graph_builder& h2d_copy(std::string id, std::string_view on, std::string from) {
    return copy(std::move(id), op_kind::h2d_copy, on, std::move(from));
  }
  graph_builder& d2h_copy(std::string id, std::string_view on, std::string from) {
    return copy(std::move(id), op_kind::d2h_copy, on, std::move(from));
  }
  graph_builder& d2d_copy(std::string id, std::string_view on, std::string from) {
    return copy(std::move(id), op_kind::d2d_copy, on, std::move(from));
  }
  // The output node (id "out" unless given), reading the method outputs in order.
  graph_builder& output(std::vector<std::string> inputs) { return output("out", std::move(inputs)); }
  graph_builder& output(std::string id, std::vector<std::string> inputs) {
    return add_pending(node{.id = std::move(id), .op = op_kind::output}, std::move(inputs), {}, false);
  }
  // Any node as given (attrs, spec devices, planned offsets...), reading `inputs` by slot. Its
  // outputs are taken as they are.
  graph_builder& add(node n, std::vector<std::string> inputs = {}) {
    return add_pending(std::move(n), std::move(inputs), {}, false);
  }
  // build() writes into every output spec the device its value lives on (location_of), as the
  // last phase of propagate_device does: a graph to compare with a propagated one.
  graph_builder& annotate_devices(bool on = true) {
    annotate_ = on;
    return *this;
  }

  // The graph; throws the first problem verify_structure finds (a graph_error naming the node).
  [[nodiscard]] graph build() const {
    graph g = build_unchecked();
    verify_report report = verify_structure(g);
    if (report.ok()) return g;
    const graph_error& first = report.problems.front();
    std::string problem = first.problem();
    if (report.problems.size() > 1)
      problem += " (and " + std::to_string(report.problems.size() - 1) + " more problems)";
    throw graph_error("", first.node(), first.field(), std::move(problem));
  }

  // The graph as another model G, made through graph_model<G>::add_node (node_request) and
  // connect, vertex for vertex and slot for slot: a doctest suite of a compiler's own IR writes
  // its graphs with the builder too. Checked as build() checks them.
  template <modeled_graph G>
  [[nodiscard]] G build_as() const {
    static_assert(model_requirements::add_node<G>,
                  "devpass: graph_builder::build_as<G> makes nodes through `static vertex add_node(G&, const "
                  "node_request&)` in graph_model<G>, which this model lacks");
    const graph source = build();
    G g;
    for (vertex v = 0, n = boost::num_vertices(source); v < n; ++v) {
      const node& from = source[v];
      const vertex made = graph_model<G>::add_node(
          g, node_request{from.op, from.device, from.id, from.kernel.view(), from.attrs.view(),
                          std::span<const tensor_spec>(from.outputs.data(), from.outputs.size()), std::nullopt,
                          from.resident});
      if (made != v) throw graph_error("", from.id, "", "graph_model::add_node made vertex " + std::to_string(made));
    }
    for (const auto e : boost::make_iterator_range(boost::edges(source)))
      connect(g, value_ref{boost::source(e, source), source[e].output}, boost::target(e, source), source[e].slot);
    return g;
  }

  // The graph as written, not verified: references are resolved (a graph_error for an unknown id)
  // but may read an output the producer does not have, and so on, for tests of the verifier.
  [[nodiscard]] graph build_unchecked() const {
    graph g;
    g[boost::graph_bundle].name = method_;
    std::unordered_map<std::string_view, vertex> by_id;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      const node& n = pending_[i].n;
      if (!by_id.emplace(n.id, static_cast<vertex>(i)).second)
        throw graph_error("", n.id, "id", "the builder has two nodes with this id");
    }
    std::vector<value_ref> resolved;  // every node's operands, flattened in order
    std::vector<std::size_t> first_operand(pending_.size() + 1, 0);
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      const pending& p = pending_[i];
      for (std::size_t slot = 0; slot < p.inputs.size(); ++slot) resolved.push_back(resolve(p, slot, by_id));
      first_operand[i + 1] = resolved.size();
    }
    // Layouts: a node given none takes its operand 0's, which may itself be inferred.
    std::vector<node_outputs> outputs(pending_.size());
    std::vector<char> state(pending_.size(), 0);  // 0 unknown, 1 being inferred, 2 known
    for (std::size_t i = 0; i < pending_.size(); ++i) infer(i, resolved, first_operand, outputs, state);
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      node n = pending_[i].n;
      n.outputs = std::move(outputs[i]);
      (void)add_node(g, std::move(n));
    }
    for (std::size_t i = 0; i < pending_.size(); ++i)
      for (std::size_t slot = 0; slot < pending_[i].inputs.size(); ++slot)
        connect(g, resolved[first_operand[i] + slot], static_cast<vertex>(i), static_cast<std::uint32_t>(slot));
    if (annotate_)
      for (const auto v : boost::make_iterator_range(boost::vertices(g)))
        for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) g[v].outputs[k].device = location_of(g, {v, k});
    return g;
  }

 private:
  struct pending {
    node n;
    std::vector<std::string> inputs;
    bool infer_layout = false;  // no outputs given: take operand 0's
  };

  static device parse(const std::string& id, std::string_view text) {
    const auto d = parse_device(text);
    if (!d) throw graph_error("", id, "device", "'" + std::string(text) + "' is not a device (cpu, cuda, cuda:N)");
    return *d;
  }

  graph_builder& source(std::string id, op_kind op, const layout& l, std::string_view on) {
    node n{.id = std::move(id), .op = op};
    n.device = parse(n.id, on);
    n.outputs.push_back(l.spec());
    return add_pending(std::move(n), {}, {}, false);
  }
  graph_builder& copy(std::string id, op_kind op, std::string_view on, std::string from) {
    node n{.id = std::move(id), .op = op};
    n.device = parse(n.id, on);
    return add_pending(std::move(n), {std::move(from)}, {});
  }
  graph_builder& add_pending(node n, std::vector<std::string> inputs, std::vector<layout> outputs, bool infer = true) {
    pending p{std::move(n), std::move(inputs), infer && outputs.empty()};
    for (const layout& l : outputs) p.n.outputs.push_back(l.spec());
    pending_.push_back(std::move(p));
    return *this;
  }

  value_ref resolve(const pending& p, std::size_t slot,
                    const std::unordered_map<std::string_view, vertex>& by_id) const {
    const std::string& reference = p.inputs[slot];
    std::string_view id = reference;
    std::uint32_t output = 0;
    if (ends_in_output_index(reference)) {
      const auto colon = reference.rfind(':');
      id = std::string_view(reference).substr(0, colon);
      const std::string digits = reference.substr(colon + 1);
      if (digits.size() > 9)
        throw graph_error("", p.n.id, "inputs",
                          "input " + std::to_string(slot) + " reads output " + digits + " of '" + std::string(id) +
                              "', which is far too large");
      output = static_cast<std::uint32_t>(std::stoul(digits));
    }
    const auto it = by_id.find(id);
    if (it == by_id.end())
      throw graph_error(
          "", p.n.id, "inputs",
          "input " + std::to_string(slot) + " reads '" + reference + "', which no node of the builder defines");
    return {it->second, output};
  }

  void infer(std::size_t i, const std::vector<value_ref>& resolved, const std::vector<std::size_t>& first_operand,
             std::vector<node_outputs>& outputs, std::vector<char>& state) const {
    if (state[i] == 2) return;
    const pending& p = pending_[i];
    if (!p.infer_layout) {
      outputs[i] = p.n.outputs;
      state[i] = 2;
      return;
    }
    if (state[i] == 1)
      throw graph_error("", p.n.id, "outputs", "its layout is inferred from operand 0 in a cycle: give its outputs");
    if (p.inputs.empty())
      throw graph_error("", p.n.id, "outputs", "no operand to take the layout from: give its outputs");
    state[i] = 1;
    const value_ref from = resolved[first_operand[i]];
    infer(from.producer, resolved, first_operand, outputs, state);
    const auto& source = outputs[from.producer];
    if (from.output >= source.size())
      throw graph_error("", p.n.id, "inputs",
                        "input 0 reads output " + std::to_string(from.output) + " of '" + pending_[from.producer].n.id +
                            "', which has " + std::to_string(source.size()) + " output(s)");
    outputs[i] = {tensor_spec{source[from.output].type, source[from.output].shape}};
    state[i] = 2;
  }

  std::string method_;
  std::vector<pending> pending_;
  bool annotate_ = false;
};

}  // namespace devpass::testing
