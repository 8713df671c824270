// devpass/io/detail/json_graph_reader.hpp — the devpass.graph/1 reader's two paths over one set
// of checks: a DOM over the whole text (the reference, and the one that words errors) and the
// streaming path over batches of nodes (json_reader.hpp says how the two are chosen).
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"
#include "devpass/io/detail/field_path.hpp"
#include "devpass/io/detail/id_table.hpp"
#include "devpass/io/detail/json_field_checks.hpp"
#include "devpass/io/detail/node_layout.hpp"
#include "devpass/io/read_options.hpp"

namespace devpass {

inline constexpr std::string_view graph_format_name = "devpass.graph/1";

namespace detail {

class json_graph_reader : json_field_checks {
 public:
  explicit json_graph_reader(std::string_view file, read_options options = {})
      : json_field_checks(file), options_(options) {}

  // The whole document as one DOM into `g`: the reader's reference path, and the one that words
  // errors. (Graphs are filled in place: adjacency_list has no move constructor, so a graph
  // returned through an optional or a by-value parameter is a deep copy.)
  void read_dom(const simdjson::padded_string& text, graph& g) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (auto code = parser.parse(text).get(root)) {
      // simdjson may report bad UTF-8 inside a string as a string error; say what is wrong.
      if (!simdjson::validate_utf8(text.data(), text.size())) code = simdjson::UTF8_ERROR;
      fail("", "", parse_problem(code));
    }
    const header h = read_header(root);
    start_graph(g, h.name, h.nodes.size());
    pending_.reserve(h.nodes.size() + h.nodes.size() / 2);
    vertex v = 0;
    for (const element item : h.nodes) read_node(g, v++, item);
    finish_graph(g);
  }

  // The streaming path into `g`: false for any problem at all, `g` then left half built (the
  // caller reads the text with read_dom, which says what the problem is). Reads `source` twice.
  template <class Source>
  bool read_streaming(Source& source, std::size_t batch_bytes, graph& g) {
    try {
      return stream(source, batch_bytes, g);
    } catch (const graph_error&) {
      return false;
    }
  }

 private:
  // An edge to make once every node is read: input `slot` of `consumer` reads `ref` ("id" or
  // "id:k"). read_dom makes every edge after the last node, in input order; the streaming path
  // makes them as it reads, in the same order, until a reference points forward, and defers that
  // one and every later one (keeping their text: `ref` would point into a batch's parse that is
  // gone). So the graph, its edge order too, is the same whichever path read it.
  struct pending_input {
    vertex consumer;
    std::uint32_t slot;
    std::string_view ref;
  };
  struct header {
    std::string_view name;
    simdjson::dom::array nodes;
  };

  // The top-level object: its fields checked, the name and the nodes array.
  header read_header(element root) const {
    const auto top = expect_object(root, "", field_path{});
    element format, name, nodes;
    bool has_format = false, has_name = false, has_nodes = false;
    for (const auto field : top) {
      bool* seen = nullptr;
      if (field.key == "format") {
        seen = &has_format;
        format = field.value;
      } else if (field.key == "name") {
        seen = &has_name;
        name = field.value;
      } else if (field.key == "nodes") {
        seen = &has_nodes;
        nodes = field.value;
      } else
        fail("", std::string(field.key), "unknown field (expected format, name, nodes)");
      if (*seen) fail("", std::string(field.key), "duplicate field");
      *seen = true;
    }
    if (!has_format) fail("", "format", "missing (expected \"devpass.graph/1\")");
    if (const auto f = expect_string(format, "", {"format"}); f != graph_format_name)
      fail("", "format", "expected \"devpass.graph/1\", found " + quoted(f));
    if (!has_name) fail("", "name", "missing");
    if (!has_nodes) fail("", "nodes", "missing");
    const auto list = expect_array(nodes, "", {"nodes"});
    return {expect_string(name, "", {"name"}), list};
  }

  // `g` made a graph of `count` nodes yet to be read.
  void start_graph(graph& g, std::string_view name, std::size_t count) {
    g = graph();                                                 // cheap: the copy of an empty graph
    reserve_nodes(g, node_capacity_for(count), options_.pages);  // room for the copies passes add
    populate_room(g, count, 0);                                  // the vertices about to be made, faulted in at once
    g.m_vertices.resize(count);                                  // every vertex up front: references may point forward
    g[boost::graph_bundle].name = std::string(name);
    ids_.emplace(count);
    pending_.clear();
  }

  // Every edge, once every node is known.
  void finish_graph(graph& g) {
    // One edge per input, and room for the copies passes add (each reads one edge), as for nodes.
    const std::size_t count = boost::num_vertices(g);
    reserve_edges(g, g.m_edges.size() + pending_.size() + (node_capacity_for(count) - count), options_.pages);
    for (const pending_input& p : pending_) connect(g, resolve(g, p), p.consumer, p.slot);
  }

  template <class Source>
  bool stream(Source& source, std::size_t batch_bytes, graph& g) {
    const std::optional<node_layout> layout = scan_node_layout(source, batch_bytes);
    // Past simdjson's limit read_dom says the file is too large.
    if (!layout || layout->size > simdjson::SIMDJSON_MAXSIZE_BYTES || !source.rewind()) return false;
    std::vector<char> text;
    simdjson::dom::parser parser;
    // The fields before the array, with an empty array in its place: the same checks as read_dom's.
    constexpr std::string_view empty_nodes = "[]}";
    text.resize(layout->nodes_open + empty_nodes.size() + simdjson::SIMDJSON_PADDING);
    if (source.read(text.data(), layout->nodes_open) != layout->nodes_open) return false;
    empty_nodes.copy(text.data() + layout->nodes_open, empty_nodes.size());
    element root;
    if (parser.parse(text.data(), layout->nodes_open + empty_nodes.size(), false).get(root)) return false;
    const header h = read_header(root);
    start_graph(g, h.name, layout->count);
    // Edges are made as nodes are read: room for about as many as a model file has (address
    // space: pages are touched only as edges are made), and for the copies passes add.
    reserve_edges(g, node_capacity_for(layout->count) + layout->count, options_.pages);
    streaming_ = true;
    // A batch is one level less deep than the document: the same limit as read_dom's.
    if (parser.allocate(batch_bytes + 2, simdjson::DEFAULT_MAX_DEPTH - 1)) return false;
    std::size_t at = layout->nodes_open;  // the last byte read: the '[' or the comma before the batch
    if (char open = 0; source.read(&open, 1) != 1) return false;
    vertex v = 0;
    for (const std::size_t end : layout->ends) {
      // "[" + the elements between `at` and `end` + "]": the bytes up to `end`, whose last (the
      // comma after the batch, or the array's ']') becomes the batch's ']'.
      const std::size_t length = end - at;
      text.resize(length + 1 + simdjson::SIMDJSON_PADDING);
      text[0] = '[';
      if (source.read(text.data() + 1, length) != length) return false;
      text[length] = ']';
      simdjson::dom::array batch;
      if (parser.parse(text.data(), length + 1, false).get_array().get(batch)) return false;
      // Each node's id is hashed and its table slot asked for `ahead` nodes early.
      constexpr std::size_t ahead = 16;
      std::array<hashed_id, 2 * ahead> hashed{};
      auto next = batch.begin();
      std::size_t looked = 0, read = 0;
      for (; looked < ahead && next != batch.end(); ++next) hashed[looked++ % hashed.size()] = look_ahead(*next);
      for (const element item : batch) {
        if (v == layout->count) return false;
        if (next != batch.end()) hashed[looked++ % hashed.size()] = look_ahead(*next), ++next;
        read_node(g, v++, item, &hashed[read++ % hashed.size()]);
      }
      at = end;
    }
    if (v != layout->count) return false;
    finish_graph(g);
    return true;
  }

  // A batch element's id and its hash, found ahead of reading the element (look_ahead).
  struct hashed_id {
    std::string_view id;
    std::uint64_t hash = 0;
  };
  // The id of a node about to be read, hashed, its id table slot asked for; nothing for an
  // element read_node refuses (not an object, no string id), which read_node then words.
  hashed_id look_ahead(element item) const {
    simdjson::dom::object object;
    std::string_view id;
    if (item.get_object().get(object) || object.at_key("id").get_string().get(id)) return {};
    const std::uint64_t h = id_table::hash(id);
    ids_->prefetch(h);
    return {id, h};
  }

  // Node v from `item`; `ahead`, when given, is what look_ahead found for it.
  void read_node(graph& g, vertex v, element item, const hashed_id* ahead = nullptr) {
    const auto object = expect_object(item, "", {"nodes", v});

    // Collect the fields first so that every later message can name the node by its id.
    enum slot_index { id_f, op_f, device_f, resident_f, kernel_f, inputs_f, outputs_f, attrs_f, field_count };
    static constexpr std::string_view names[field_count] = {"id",     "op",     "device",  "resident",
                                                            "kernel", "inputs", "outputs", "attrs"};
    element fields[field_count];
    bool present[field_count] = {};
    std::string_view unknown, duplicate;
    for (const auto field : object) {
      std::size_t k = 0;
      while (k < field_count && names[k] != field.key) ++k;
      if (k == field_count) {
        if (unknown.empty()) unknown = field.key;
        continue;
      }
      if (present[k] && duplicate.empty()) duplicate = field.key;
      present[k] = true;
      fields[k] = field.value;
    }

    const field_path id_path{"nodes", v, "id"};
    if (!present[id_f]) fail("", id_path, "missing");
    const std::string_view id_text = expect_string(fields[id_f], "", id_path);
    if (id_text.empty()) fail("", id_path, "empty id");
    node& n = g[v];
    n.id = std::string(id_text);
    const std::string& id = n.id;
    if (!duplicate.empty()) fail(id, std::string(duplicate), "duplicate field");
    if (!unknown.empty())
      fail(id, std::string(unknown),
           "unknown field (expected id, op, device, resident, kernel, inputs, outputs, attrs)");
    if (ends_in_output_index(id_text))
      fail(id, "id", "an id cannot end in ':<digits>': references would read it as an output index");
    // The hash found ahead is the id's when it is the same text (the node has one id field).
    const bool hashed = ahead && ahead->id.data() == id_text.data() && ahead->id.size() == id_text.size();
    if (const auto first = hashed ? ids_->insert(g, id_text, v, ahead->hash) : ids_->insert(g, id_text, v))
      fail(id, "id", "duplicate id (also nodes[" + std::to_string(*first) + "])");

    if (!present[op_f]) fail(id, "op", "missing");
    const std::string_view op_text = expect_string(fields[op_f], id, {"op"});
    const auto op = parse_op_kind(op_text);
    if (!op)
      fail(id, "op",
           "unknown op " + quoted(op_text) +
               " (expected input, constant, delegate, call, h2d_copy, d2h_copy, d2d_copy, output)");
    n.op = *op;

    if (present[device_f]) n.device = read_device(fields[device_f], id, {"device"});
    // Which nodes may be resident (a copy of a constant) is verify_structure's to say.
    if (present[resident_f]) n.resident = expect_bool(fields[resident_f], id, {"resident"});
    if (present[kernel_f]) n.kernel = texts_.get(expect_string(fields[kernel_f], id, {"kernel"}));

    if (present[outputs_f]) {
      const auto outs = expect_array(fields[outputs_f], id, {"outputs"});
      n.outputs.reserve(outs.size());
      std::size_t k = 0;
      for (const element spec : outs) n.outputs.push_back(read_spec(spec, id, k++));
    }
    if (present[inputs_f]) {
      const auto ins = expect_array(fields[inputs_f], id, {"inputs"});
      // Exactly as many in-edge entries as inputs: growing 1 -> 2 -> 4 would leave slack and
      // free a block per step, for a million nodes.
      g.m_vertices[v].m_in_edges.reserve(ins.size());
      std::uint32_t slot = 0;
      for (const element ref : ins) {
        const pending_input input{v, slot, expect_string(ref, id, {"inputs", slot})};
        if (streaming_)
          add_input_now(g, input);
        else
          pending_.push_back(input);
        ++slot;
      }
      n.arity = slot;
    }
    if (present[attrs_f]) {
      expect_object(fields[attrs_f], id, {"attrs"});
      n.attrs = texts_.get(simdjson::minify(fields[attrs_f]));
    }
  }

  device read_device(element e, const std::string& node, const field_path& field) const {
    const std::string_view text = expect_string(e, node, field);
    const auto d = parse_device(text);
    if (!d) fail(node, field, "unknown device " + quoted(text) + " (expected cpu, cuda or cuda:N)");
    return *d;
  }

  // Output `k` of `node`.
  tensor_spec read_spec(element e, const std::string& node, std::size_t k) const {
    const auto object = expect_object(e, node, {"outputs", k});
    tensor_spec spec;
    bool has_dtype = false, has_shape = false, has_device = false, has_mem_id = false, has_offset = false;
    for (const auto field : object) {
      const field_path path{"outputs", k, field.key};
      bool* seen = nullptr;
      if (field.key == "dtype") {
        seen = &has_dtype;
        const std::string_view name = expect_string(field.value, node, path);
        const auto t = parse_dtype(name);
        if (!t) fail(node, path, "unknown dtype " + quoted(name));
        spec.type = *t;
      } else if (field.key == "shape") {
        seen = &has_shape;
        const auto dims = expect_array(field.value, node, path);
        spec.shape.reserve(dims.size());
        std::size_t d = 0;
        for (const element dim : dims)
          spec.shape.push_back(expect_count(dim, std::numeric_limits<std::int64_t>::max(), node,
                                            {"outputs", k, "shape", d++}, "dimension"));
      } else if (field.key == "device") {
        seen = &has_device;
        spec.device = read_device(field.value, node, path);
      } else if (field.key == "mem_id") {
        seen = &has_mem_id;
        spec.mem_id = static_cast<std::int32_t>(
            expect_count(field.value, std::numeric_limits<std::int32_t>::max(), node, path, "mem_id"));
      } else if (field.key == "offset") {
        seen = &has_offset;
        spec.offset = expect_count(field.value, std::numeric_limits<std::int64_t>::max(), node, path, "offset");
      } else {
        fail(node, path, "unknown field (expected dtype, shape, device, mem_id, offset)");
      }
      if (*seen) fail(node, path, "duplicate field");
      *seen = true;
    }
    if (!has_dtype) fail(node, field_path{"outputs", k, "dtype"}, "missing");
    if (!has_shape) fail(node, field_path{"outputs", k, "shape"}, "missing");
    if (!checked_byte_size(spec.type, spec.shape))
      fail(node, field_path{"outputs", k, "shape"}, "the tensor's byte size does not fit in 63 bits");
    return spec;
  }

  // The streaming path: the edge of `p` now, unless an edge before it waits or it points forward.
  void add_input_now(graph& g, pending_input p) {
    if (pending_.empty())
      if (const auto found = ids_->find(g, reference_id(p.ref))) {
        connect(g, resolve(g, p, *found), p.consumer, p.slot);  // the id looked up once, not twice
        return;
      }
    p.ref = forward_refs_.emplace_back(p.ref);
    pending_.push_back(p);
  }

  // The id part of a reference: "a" for "a" and "a:1".
  static std::string_view reference_id(std::string_view ref) {
    const auto colon = ref.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < ref.size() &&
        ref.find_first_not_of("0123456789", colon + 1) == std::string_view::npos)
      return ref.substr(0, colon);
    return ref;
  }

  // The value `p` reads (its reference's id looked up), or the problem with it.
  value_ref resolve(const graph& g, const pending_input& p) const {
    const auto found = ids_->find(g, reference_id(p.ref));
    if (!found) fail(g[p.consumer].id, field_path{"inputs", p.slot}, "reference " + quoted(p.ref) + " names no node");
    return resolve(g, p, *found);
  }
  // The same once the node its id names is known: `found`.
  value_ref resolve(const graph& g, const pending_input& p, vertex found) const {
    const std::string_view id = reference_id(p.ref);
    const bool indexed = id.size() != p.ref.size();
    std::uint32_t output = 0;
    const field_path field{"inputs", p.slot};
    const node& producer = g[found];
    if (indexed) {
      const char* first = p.ref.data() + id.size() + 1;
      const char* last = p.ref.data() + p.ref.size();
      const auto [end, ec] = std::from_chars(first, last, output);
      if (ec != std::errc{} || end != last || output >= producer.outputs.size())
        fail(g[p.consumer].id, field,
             "reference " + quoted(p.ref) + " names output " + std::string(first, last) + " of '" + producer.id +
                 "', which has " + std::to_string(producer.outputs.size()) + " output(s)");
    } else if (producer.outputs.empty()) {
      fail(g[p.consumer].id, field,
           "reference " + quoted(p.ref) + " names node '" + producer.id + "', which has no outputs");
    }
    return value_ref{found, output};
  }

  read_options options_;
  std::optional<id_table> ids_;
  shared_text_pool texts_;  // kernels and attrs: one block per distinct text
  std::vector<pending_input> pending_;
  std::deque<std::string> forward_refs_;  // a deque: the views into its strings stay valid as it grows
  bool streaming_ = false;
};

}  // namespace detail
}  // namespace devpass
