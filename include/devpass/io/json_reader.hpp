// devpass/io/json_reader.hpp — reads a devpass.graph/1 file (docs/file-format.md) into a graph.
//
//   read_graph_file(path)            path "-" reads standard input
//   read_graph_string(json, label)   label names the text in messages
//
// Laws: vertex order is file order (references may point forward); every rejected input throws
// graph_error `file: node 'id': field: what is wrong`, never crashes, whatever the bytes (bad
// JSON, invalid UTF-8, nesting deeper than simdjson's limit, truncation). Parsing checks live here;
// the structural checks (op arity, copies, one output node, cycles) are verify_structure's: the
// reader throws structure_error, whose message is the first problem with the file name added and
// which carries every problem found.
//
// How: the file is streamed. One pass finds where the nodes array is and cuts it into batches of
// whole elements (detail/node_layout.hpp); a second pass parses the fields before the array and
// then each batch with simdjson's DOM, and builds the nodes as it goes, so no more than a batch of
// text and its parse is held beside the graph (a 1M-node file: docs/performance.md, "Files").
// Any problem on that path — bad JSON, a bad node, a layout the scan does not take (`nodes` not
// the last field) — reads the text again the way the reader always has, one DOM over the whole
// document: that path alone words the errors, so they stay what they were, and the streaming
// path is only ever the same reading, faster.
#pragma once

// devpass::io is defined without simdjson too (CMakeLists.txt), so that a program linking it
// learns what is missing here rather than from CMake's "target not found".
#ifdef DEVPASS_IO_WITHOUT_SIMDJSON
#error "devpass: the devpass.graph/1 reader needs simdjson, which was not found when devpass was configured: install it (Debian: libsimdjson-dev) and configure again"
#endif

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <deque>
#include <vector>

#include <simdjson.h>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/io/detail/node_layout.hpp"
#include "devpass/io/detail/text_source.hpp"

namespace devpass {

inline constexpr std::string_view graph_format_name = "devpass.graph/1";

namespace detail {

// Where in a node a problem is, rendered only when there is one ("outputs[0].shape[1]"), so the
// reader allocates nothing for paths on the good path.
struct field_path {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::string_view head;
  std::size_t index = none;
  std::string_view tail = {};
  std::size_t tail_index = none;

  [[nodiscard]] std::string str() const {
    std::string text(head);
    if (index != none) text += "[" + std::to_string(index) + "]";
    if (!tail.empty()) (text += '.') += tail;
    if (tail_index != none) text += "[" + std::to_string(tail_index) + "]";
    return text;
  }
};

// Node ids to vertices: open addressing over (hash, vertex), keys compared through the graph.
// A std::unordered_map<string_view, vertex> spent most of its time allocating and chasing bucket
// chains on million-node files.
class id_table {
 public:
  explicit id_table(std::size_t count) {
    std::size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    slots_.assign(capacity, slot{});
    mask_ = capacity - 1;
  }
  // The vertex already holding `id`, or nullopt after recording `v` for it.
  std::optional<vertex> insert(const graph& g, std::string_view id, vertex v) {
    const std::uint64_t h = std::hash<std::string_view>{}(id);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      slot& s = slots_[i];
      if (s.vertex_plus_one == 0) {
        s = {h, v + 1};
        return std::nullopt;
      }
      if (s.hash == h && g[s.vertex_plus_one - 1].id == id) return s.vertex_plus_one - 1;
    }
  }
  [[nodiscard]] std::optional<vertex> find(const graph& g, std::string_view id) const {
    const std::uint64_t h = std::hash<std::string_view>{}(id);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.vertex_plus_one == 0) return std::nullopt;
      if (s.hash == h && g[s.vertex_plus_one - 1].id == id) return s.vertex_plus_one - 1;
    }
  }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::uint64_t vertex_plus_one = 0;  // 0: empty
  };
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace detail

// A file that parses but whose graph is not well formed (verify_structure's checks). what() is
// the first problem with the file name, like every other reader error; report() holds every
// problem verify_structure found (without the file name), for a tool that lists them all
// (devpass-opt --verify-each). Parse errors (bad JSON, an unknown op, a dangling reference) stop
// the reader where they are and are plain graph_errors.
class structure_error : public graph_error {
 public:
  structure_error(std::string file, verify_report report)
      : graph_error(std::move(file), report.problems.front().node(), report.problems.front().field(),
                    report.problems.front().problem()),
        report_(std::move(report)) {}
  [[nodiscard]] const verify_report& report() const noexcept { return report_; }

 private:
  verify_report report_;
};

namespace detail {

class json_graph_reader {
 public:
  explicit json_graph_reader(std::string_view file) : file_(file) {}

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
  using element = simdjson::dom::element;
  using element_type = simdjson::dom::element_type;

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

  [[noreturn]] void fail(std::string node, std::string field, std::string problem) const {
    throw graph_error(std::string(file_), std::move(node), std::move(field), std::move(problem));
  }
  [[noreturn]] void fail(const std::string& node, const field_path& field, std::string problem) const {
    fail(node, field.str(), std::move(problem));
  }

  static std::string parse_problem(simdjson::error_code code) {
    switch (code) {
      case simdjson::DEPTH_ERROR:
        return "invalid JSON: nested deeper than " + std::to_string(simdjson::DEFAULT_MAX_DEPTH) + " levels";
      case simdjson::UTF8_ERROR: return "invalid JSON: the text is not valid UTF-8";
      case simdjson::EMPTY: return "invalid JSON: the file is empty";
      case simdjson::CAPACITY: return "invalid JSON: the file is too large to parse";
      default: return std::string("invalid JSON: ") + simdjson::error_message(code);
    }
  }

  static std::string_view type_name(element_type t) {
    switch (t) {
      case element_type::ARRAY: return "an array";
      case element_type::OBJECT: return "an object";
      case element_type::INT64:
      case element_type::UINT64:
      case element_type::DOUBLE: return "a number";
      case element_type::STRING: return "a string";
      case element_type::BOOL: return "a boolean";
      case element_type::NULL_VALUE: return "null";
    }
    return "a value";
  }

  // Quoted for messages; long text is cut so a message stays one readable line.
  static std::string quoted(std::string_view text) {
    constexpr std::size_t limit = 60;
    if (text.size() > limit) return "'" + std::string(text.substr(0, limit)) + "...'";
    return "'" + std::string(text) + "'";
  }

  std::string_view expect_string(element e, const std::string& node, const field_path& field) const {
    std::string_view s;
    if (e.get_string().get(s)) fail(node, field, "expected a string, found " + std::string(type_name(e.type())));
    return s;
  }
  simdjson::dom::array expect_array(element e, const std::string& node, const field_path& field) const {
    simdjson::dom::array a;
    if (e.get_array().get(a)) fail(node, field, "expected an array, found " + std::string(type_name(e.type())));
    return a;
  }
  simdjson::dom::object expect_object(element e, const std::string& node, const field_path& field) const {
    simdjson::dom::object o;
    if (e.get_object().get(o)) fail(node, field, "expected an object, found " + std::string(type_name(e.type())));
    return o;
  }
  // A JSON integer in [0, max]; `what` names the quantity in messages ("dimension", "offset").
  std::int64_t expect_count(element e, std::int64_t max, const std::string& node, const field_path& field,
                            std::string_view what) const {
    switch (e.type()) {
      case element_type::INT64: {
        const std::int64_t v = e.get_int64().value_unsafe();
        if (v < 0) fail(node, field, "negative " + std::string(what) + " " + std::to_string(v));
        if (v > max) fail(node, field, std::string(what) + " " + std::to_string(v) + " is larger than " + std::to_string(max));
        return v;
      }
      case element_type::UINT64:
        fail(node, field, std::string(what) + " " + std::to_string(e.get_uint64().value_unsafe()) + " is larger than " +
                              std::to_string(max));
      case element_type::DOUBLE: fail(node, field, std::string(what) + " is not an integer");
      default: fail(node, field, "expected an integer, found " + std::string(type_name(e.type())));
    }
  }

  // The top-level object: its fields checked, the name and the nodes array.
  header read_header(element root) const {
    const auto top = expect_object(root, "", field_path{});
    element format, name, nodes;
    bool has_format = false, has_name = false, has_nodes = false;
    for (const auto field : top) {
      bool* seen = nullptr;
      if (field.key == "format") { seen = &has_format; format = field.value; }
      else if (field.key == "name") { seen = &has_name; name = field.value; }
      else if (field.key == "nodes") { seen = &has_nodes; nodes = field.value; }
      else fail("", std::string(field.key), "unknown field (expected format, name, nodes)");
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
    g = graph();  // cheap: the copy of an empty graph
    g.m_vertices.reserve(node_capacity_for(count));  // room for the copies passes add
    g.m_vertices.resize(count);                      // every vertex up front: references may point forward
    g[boost::graph_bundle].name = std::string(name);
    ids_.emplace(count);
    pending_.clear();
  }

  // Every edge, once every node is known.
  void finish_graph(graph& g) {
    // One edge per input, and room for the copies passes add (each reads one edge), as for nodes.
    const std::size_t count = boost::num_vertices(g);
    g.m_edges.reserve(g.m_edges.size() + pending_.size() + (node_capacity_for(count) - count));
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
    g.m_edges.reserve(node_capacity_for(layout->count) + layout->count);
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
      for (const element item : batch) {
        if (v == layout->count) return false;
        read_node(g, v++, item);
      }
      at = end;
    }
    if (v != layout->count) return false;
    finish_graph(g);
    return true;
  }

  void read_node(graph& g, vertex v, element item) {
    const auto object = expect_object(item, "", {"nodes", v});

    // Collect the fields first so that every later message can name the node by its id.
    enum slot_index { id_f, op_f, device_f, kernel_f, inputs_f, outputs_f, attrs_f, field_count };
    static constexpr std::string_view names[field_count] = {"id", "op", "device", "kernel", "inputs", "outputs", "attrs"};
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
      fail(id, std::string(unknown), "unknown field (expected id, op, device, kernel, inputs, outputs, attrs)");
    if (ends_in_output_index(id_text))
      fail(id, "id", "an id cannot end in ':<digits>': references would read it as an output index");
    if (const auto first = ids_->insert(g, id_text, v))
      fail(id, "id", "duplicate id (also nodes[" + std::to_string(*first) + "])");

    if (!present[op_f]) fail(id, "op", "missing");
    const std::string_view op_text = expect_string(fields[op_f], id, {"op"});
    const auto op = parse_op_kind(op_text);
    if (!op)
      fail(id, "op", "unknown op " + quoted(op_text) +
                         " (expected input, constant, delegate, call, h2d_copy, d2h_copy, d2d_copy, output)");
    n.op = *op;

    if (present[device_f]) n.device = read_device(fields[device_f], id, {"device"});
    if (present[kernel_f]) n.kernel = std::string(expect_string(fields[kernel_f], id, {"kernel"}));

    if (present[outputs_f]) {
      const auto outs = expect_array(fields[outputs_f], id, {"outputs"});
      n.outputs.reserve(outs.size());
      std::size_t k = 0;
      for (const element spec : outs) n.outputs.push_back(read_spec(spec, id, k++));
    }
    if (present[inputs_f]) {
      const auto ins = expect_array(fields[inputs_f], id, {"inputs"});
      std::uint32_t slot = 0;
      for (const element ref : ins) {
        const pending_input input{v, slot, expect_string(ref, id, {"inputs", slot})};
        if (streaming_) add_input_now(g, input);
        else pending_.push_back(input);
        ++slot;
      }
      n.arity = slot;
    }
    if (present[attrs_f]) {
      expect_object(fields[attrs_f], id, {"attrs"});
      n.attrs = simdjson::minify(fields[attrs_f]);
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
    if (pending_.empty() && ids_->find(g, reference_id(p.ref))) {
      connect(g, resolve(g, p), p.consumer, p.slot);
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

  value_ref resolve(const graph& g, const pending_input& p) const {
    const std::string_view id = reference_id(p.ref);
    const bool indexed = id.size() != p.ref.size();
    std::uint32_t output = 0;
    const auto found = ids_->find(g, id);
    const field_path field{"inputs", p.slot};
    if (!found) fail(g[p.consumer].id, field, "reference " + quoted(p.ref) + " names no node");
    const node& producer = g[*found];
    if (indexed) {
      const char* first = p.ref.data() + id.size() + 1;
      const char* last = p.ref.data() + p.ref.size();
      const auto [end, ec] = std::from_chars(first, last, output);
      if (ec != std::errc{} || end != last || output >= producer.outputs.size())
        fail(g[p.consumer].id, field,
             "reference " + quoted(p.ref) + " names output " + std::string(first, last) + " of '" + producer.id +
                 "', which has " + std::to_string(producer.outputs.size()) + " output(s)");
    } else if (producer.outputs.empty()) {
      fail(g[p.consumer].id, field, "reference " + quoted(p.ref) + " names node '" + producer.id + "', which has no outputs");
    }
    return value_ref{*found, output};
  }

  std::string_view file_;
  std::optional<id_table> ids_;
  std::vector<pending_input> pending_;
  std::deque<std::string> forward_refs_;  // a deque: the views into its strings stay valid as it grows
  bool streaming_ = false;
};

}  // namespace detail

namespace detail {

// Bytes of text per parsed batch: its parse (about 10x the text) stays in the caches, and the
// per-parse setup is amortised (docs/performance.md, "Files").
inline constexpr std::size_t stream_batch_bytes = std::size_t{256} << 10;

// verify_structure's problems as the reader's error.
inline void verify_read(const graph& g, std::string_view file) {
  verify_report report = verify_structure(g);
  if (!report.ok()) throw structure_error(std::string(file), std::move(report));
}

// The reference path alone (one DOM over the whole text), for tests that compare the two.
[[nodiscard]] inline graph read_graph_string_dom(std::string_view json, std::string_view file_label) {
  const simdjson::padded_string text(json);
  graph g;
  json_graph_reader(file_label).read_dom(text, g);
  verify_read(g, file_label);
  return g;
}

// The streaming path alone: false where it hands over to the DOM (any problem, or a layout it
// does not take); `g` is then not a graph to use.
[[nodiscard]] inline bool read_graph_string_streaming(std::string_view json, std::string_view file_label, graph& g,
                                                      std::size_t batch_bytes = stream_batch_bytes) {
  memory_source source(json);
  return json_graph_reader(file_label).read_streaming(source, batch_bytes, g);
}

}  // namespace detail

namespace detail {
// read_graph_string's work, into `g`.
inline void read_text_into(std::string_view json, std::string_view file_label, graph& g) {
  if (!read_graph_string_streaming(json, file_label, g)) {
    const simdjson::padded_string text(json);
    json_graph_reader(file_label).read_dom(text, g);
  }
  verify_read(g, file_label);
}
}  // namespace detail

// Reads a graph from JSON text; `file_label` names it in error messages.
[[nodiscard]] inline graph read_graph_string(std::string_view json, std::string_view file_label = "<string>") {
  graph g;  // one named result, returned from one place: elided, never copied
  detail::read_text_into(json, file_label, g);
  return g;
}

// Reads a graph from a file; "-" reads standard input (named "<stdin>" in messages).
[[nodiscard]] inline graph read_graph_file(const std::string& path) {
  graph g;
  if (path == "-") {
    std::string data{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    if (std::cin.bad()) throw graph_error("<stdin>", "", "", "cannot read standard input");
    detail::read_text_into(data, "<stdin>", g);
    return g;
  }
  bool streamed = false;
  if (detail::file_source source(path); source.is_open())
    streamed = detail::json_graph_reader(path).read_streaming(source, detail::stream_batch_bytes, g);
  if (!streamed) {
    // The whole file in memory, for the DOM path: it words whatever the problem is.
    simdjson::padded_string text;
    if (simdjson::padded_string::load(path).get(text)) {
      std::FILE* probe = std::fopen(path.c_str(), "rb");
      if (probe) std::fclose(probe);
      throw graph_error(path, "", "", probe ? "cannot read the file" : "cannot open the file");
    }
    detail::json_graph_reader(path).read_dom(text, g);
  }
  detail::verify_read(g, path);
  return g;
}

}  // namespace devpass
