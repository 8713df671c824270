// bench/dom_flat_process.cpp — the process `scripts/bench io` holds devpass-opt against
// (opt_process_over_dom_flat_process): what a tuned special-purpose program does for the job of
// `devpass-opt --propagate-device --policy=executorch in.json -o out.json`.
//
//   dom_flat_process <in.json> -o <out.json>
//
// It parses the whole file with simdjson's DOM, fills flat arrays (flat_graph.hpp) and keeps what
// it writes back as views into the DOM (ids, kernels, devices, output dtypes; shapes as numbers;
// attrs minified), runs the flat insert-then-elide job (flat_propagation.hpp, flat_propagate: an
// h2d per device-delegate slot, a d2h per used output, elision, compaction), orders the result
// topologically and writes it as devpass.graph/1 JSON as devpass-opt writes its result (one node
// per line, every output spec with the device its value lives on), copies named "<id>@h2d<k>" /
// "<id>@d2h<k>" after the value they carry. It reads what the synthetic file holds
// and checks little: an unknown op, or a reference to a node not yet seen, is an error (exit 1).
// It does not verify its result; devpass-opt does by default.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "devpass/io/detail/json_string.hpp"
#include "flat_graph.hpp"
#include "flat_propagation.hpp"

namespace {

using devpass::bench::flat_graph;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "dom_flat_process: %s\n", why.c_str());
  std::exit(1);
}

std::string_view text_of(simdjson::dom::element e, const char* what) {
  std::string_view s;
  if (e.get_string().get(s)) fail(std::string("expected a string for ") + what);
  return s;
}

// The file's graph: the flat arrays of the job, and beside them what is written back.
struct parsed {
  flat_graph flat;
  std::vector<std::string_view> id, kernel, device;  // per node; device "" when absent
  std::vector<std::uint32_t> first_output;           // outputs of node i: [first_output[i], first_output[i + 1])
  std::vector<std::string_view> dtype;               // per output
  std::vector<std::uint32_t> first_dim;              // dims of output k: [first_dim[k], first_dim[k + 1])
  std::vector<std::int64_t> dims;
  std::vector<std::string_view> attrs;  // per node, "" when absent
  std::deque<std::string> attr_text;    // what attrs views
  std::string_view name;
};

std::uint8_t kind_of(std::string_view op) {
  if (op == "input") return flat_graph::input;
  if (op == "constant") return flat_graph::constant;
  if (op == "delegate") return flat_graph::delegate;
  if (op == "call") return flat_graph::call;
  if (op == "output") return flat_graph::output;
  fail("op '" + std::string(op) + "' is not one this program reads");
}

std::int32_t device_index(std::string_view device) {
  if (device.empty() || device == "cpu") return -1;
  std::int32_t index = 0;
  if (device.substr(0, 5) != "cuda:" ||
      std::from_chars(device.data() + 5, device.data() + device.size(), index).ec != std::errc{})
    fail("device '" + std::string(device) + "' is not one this program reads");
  return index;
}

void parse(simdjson::dom::element doc, parsed& p) {
  p.name = text_of(doc["name"], "name");
  simdjson::dom::array nodes;
  if (doc["nodes"].get_array().get(nodes)) fail("no nodes array");
  const std::size_t n = nodes.size();
  const std::size_t room = devpass::node_capacity_for(n);  // as devpass's reader reserves
  flat_graph& f = p.flat;
  for (auto* column : {&f.first_input, &f.arity, &f.outputs}) column->reserve(room);
  f.op.reserve(room);
  f.dev.reserve(room);
  f.src_node.reserve(2 * room);
  f.src_output.reserve(2 * room);
  for (auto* column : {&p.id, &p.kernel, &p.device, &p.attrs}) column->reserve(n);
  p.first_output.reserve(n + 1);
  p.dtype.reserve(n);
  p.first_dim.reserve(n + 1);
  p.dims.reserve(2 * n);
  p.first_output.push_back(0);
  p.first_dim.push_back(0);
  std::unordered_map<std::string_view, std::uint32_t> index_of;
  index_of.reserve(n);
  for (const simdjson::dom::element node : nodes) {
    simdjson::dom::object fields;
    if (node.get_object().get(fields)) fail("a node that is not an object");
    const auto v = static_cast<std::uint32_t>(f.op.size());
    std::string_view id, op, kernel, device, attrs;
    std::uint32_t arity = 0;
    f.first_input.push_back(static_cast<std::uint32_t>(f.src_node.size()));
    for (const auto field : fields) {
      const std::string_view key = field.key;
      if (key == "id") {
        id = text_of(field.value, "id");
      } else if (key == "op") {
        op = text_of(field.value, "op");
      } else if (key == "kernel") {
        kernel = text_of(field.value, "kernel");
      } else if (key == "device") {
        device = text_of(field.value, "device");
      } else if (key == "inputs") {
        for (const simdjson::dom::element in : field.value.get_array()) {
          const std::string_view ref = text_of(in, "an input");
          std::uint32_t output = 0;
          auto found = index_of.find(ref);
          if (found == index_of.end()) {  // "id:N", as devpass's reader resolves it
            const auto colon = ref.rfind(':');
            if (colon != std::string_view::npos) {
              found = index_of.find(ref.substr(0, colon));
              std::from_chars(ref.data() + colon + 1, ref.data() + ref.size(), output);
            }
          }
          if (found == index_of.end()) fail("input '" + std::string(ref) + "' names no earlier node");
          f.src_node.push_back(found->second);
          f.src_output.push_back(output);
          ++arity;
        }
      } else if (key == "outputs") {
        for (const simdjson::dom::element spec : field.value.get_array()) {
          p.dtype.push_back(text_of(spec["dtype"], "dtype"));
          for (const simdjson::dom::element dim : spec["shape"].get_array()) p.dims.push_back(dim.get_int64());
          p.first_dim.push_back(static_cast<std::uint32_t>(p.dims.size()));
        }
      } else if (key == "attrs") {
        attrs = p.attr_text.emplace_back(simdjson::minify(field.value));
      }
    }
    index_of.emplace(id, v);
    const std::uint8_t kind = kind_of(op);
    f.op.push_back(kind);
    f.dev.push_back(kind == flat_graph::delegate ? device_index(device) : -1);
    f.arity.push_back(arity);
    p.first_output.push_back(static_cast<std::uint32_t>(p.dtype.size()));
    f.outputs.push_back(p.first_output[v + 1] - p.first_output[v]);
    p.id.push_back(id);
    p.kernel.push_back(kernel);
    p.device.push_back(device);
    p.attrs.push_back(attrs);
  }
}

// A buffered file, written in blocks of 1 MiB.
struct out_file {
  std::FILE* file;
  std::string buffer;
  void drain(bool all) {
    if (buffer.size() < (1u << 20) && !all) return;
    if (std::fwrite(buffer.data(), 1, buffer.size(), file) != buffer.size()) fail("cannot write the output");
    buffer.clear();
  }
  template <class Int>
  void integer(Int value) {
    char text[24];
    buffer.append(text, std::to_chars(text, text + sizeof text, value).ptr);
  }
};

// Writes the job's result: `g` and `was` (flat_propagate's), names and specs from `p`.
void write_result(const parsed& p, const flat_graph& g, const std::vector<std::uint32_t>& was, const char* path) {
  const auto original = static_cast<std::uint32_t>(p.id.size());
  const auto nodes = static_cast<std::uint32_t>(g.op.size());
  // The value a node carries, followed through copies to the input's node that made it.
  std::vector<std::uint32_t> root(nodes), root_output(nodes);
  const auto carried = [&](std::uint32_t v, std::uint32_t output,
                           auto& self) -> std::pair<std::uint32_t, std::uint32_t> {
    if (was[v] < original) return {was[v], output};
    return self(g.src_node[g.first_input[v]], g.src_output[g.first_input[v]], self);
  };
  for (std::uint32_t v = 0; v < nodes; ++v) std::tie(root[v], root_output[v]) = carried(v, 0, carried);
  std::vector<std::string> copy_name(nodes - std::min(nodes, original));
  std::vector<std::string_view> name(nodes);
  std::uint32_t copies = 0;
  for (std::uint32_t v = 0; v < nodes; ++v) {
    if (was[v] < original) {
      name[v] = p.id[was[v]];
      continue;
    }
    std::string& s = copy_name[copies];
    s.append(p.id[root[v]]).append(g.op[v] == flat_graph::h2d ? "@h2d" : "@d2h").append(std::to_string(copies++));
    name[v] = s;
  }
  // Kahn's order over the result: copies come after their source, before their readers.
  std::vector<std::uint32_t> first_use(nodes + 1, 0), uses(g.src_node.size()), waiting(g.arity.begin(), g.arity.end());
  for (const std::uint32_t s : g.src_node) ++first_use[s + 1];
  for (std::uint32_t v = 0; v < nodes; ++v) first_use[v + 1] += first_use[v];
  std::vector<std::uint32_t> fill(first_use.begin(), first_use.end() - 1);
  for (std::uint32_t v = 0; v < nodes; ++v)
    for (std::uint32_t i = g.first_input[v]; i < g.first_input[v] + g.arity[v]; ++i) uses[fill[g.src_node[i]]++] = v;
  std::vector<std::uint32_t> order;
  order.reserve(nodes);
  for (std::uint32_t v = 0; v < nodes; ++v)
    if (waiting[v] == 0) order.push_back(v);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (std::uint32_t u = first_use[order[k]]; u < first_use[order[k] + 1]; ++u)
      if (--waiting[uses[u]] == 0) order.push_back(uses[u]);
  if (order.size() != nodes) fail("the result has a cycle");

  out_file out{std::fopen(path, "wb"), {}};
  if (!out.file) fail(std::string("cannot create ") + path);
  out.buffer.reserve((1u << 20) + 4096);
  out.buffer += "{\"format\":\"devpass.graph/1\",\"name\":";
  devpass::detail::append_json_string(out.buffer, p.name);
  out.buffer += ",\"nodes\":[\n";
  static constexpr const char* op_names[] = {"input",    "constant", "delegate", "call",
                                             "h2d_copy", "d2h_copy", "output",   "d2d_copy"};
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::uint32_t v = order[k];
    const bool copy = was[v] >= original;
    out.buffer += "{\"id\":";
    devpass::detail::append_json_string(out.buffer, name[v]);
    out.buffer += ",\"op\":\"";
    out.buffer += op_names[g.op[v]];
    out.buffer += '"';
    if (copy || !p.device[was[v]].empty()) {
      out.buffer += ",\"device\":\"";
      if (copy) {
        out.buffer += "cuda:";
        out.integer(g.dev[v]);
      } else {
        out.buffer += p.device[was[v]];
      }
      out.buffer += '"';
    }
    if (!copy && !p.kernel[was[v]].empty()) {
      out.buffer += ",\"kernel\":";
      devpass::detail::append_json_string(out.buffer, p.kernel[was[v]]);
    }
    if (g.arity[v] != 0) {
      out.buffer += ",\"inputs\":[";
      for (std::uint32_t i = g.first_input[v]; i < g.first_input[v] + g.arity[v]; ++i) {
        if (i != g.first_input[v]) out.buffer += ',';
        devpass::detail::append_json_string(out.buffer, name[g.src_node[i]]);
        if (g.src_output[i] != 0) {  // "id:N": the digits inside the quotes
          out.buffer.back() = ':';
          out.integer(g.src_output[i]);
          out.buffer += '"';
        }
      }
      out.buffer += ']';
    }
    // A copy's one output is the spec of the value it carries.
    const std::uint32_t first = copy ? p.first_output[root[v]] + root_output[v] : p.first_output[was[v]];
    const std::uint32_t last = copy ? first + 1 : p.first_output[was[v] + 1];
    if (first != last) {
      out.buffer += ",\"outputs\":[";
      for (std::uint32_t o = first; o < last; ++o) {
        out.buffer += o == first ? "{\"dtype\":\"" : ",{\"dtype\":\"";
        out.buffer += p.dtype[o];
        out.buffer += "\",\"shape\":[";
        for (std::uint32_t d = p.first_dim[o]; d < p.first_dim[o + 1]; ++d) {
          if (d != p.first_dim[o]) out.buffer += ',';
          out.integer(p.dims[d]);
        }
        // Where the value lives, as devpass-opt writes it after propagation: a device
        // delegate's or an h2d copy's device, else the host.
        const bool on_device = g.dev[v] >= 0 && (g.op[v] == flat_graph::delegate || g.op[v] == flat_graph::h2d);
        out.buffer += "],\"device\":\"";
        if (on_device) {
          out.buffer += "cuda:";
          out.integer(g.dev[v]);
        } else {
          out.buffer += "cpu";
        }
        out.buffer += "\"}";
      }
      out.buffer += ']';
    }
    if (!copy && !p.attrs[was[v]].empty()) {
      out.buffer += ",\"attrs\":";
      out.buffer += p.attrs[was[v]];
    }
    out.buffer += k + 1 < order.size() ? "},\n" : "}\n";
    out.drain(false);
  }
  out.buffer += "]}\n";
  out.drain(true);
  if (std::fclose(out.file) != 0) fail(std::string("cannot write ") + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[2], "-o") != 0) {
    std::fprintf(stderr, "usage: dom_flat_process <in.json> -o <out.json>\n");
    return 2;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto error = parser.load(argv[1]).get(doc))
    fail(std::string(argv[1]) + ": " + simdjson::error_message(error));
  parsed p;
  parse(doc, p);
  flat_graph result;
  std::vector<std::uint32_t> was;
  was.reserve(devpass::node_capacity_for(p.id.size()));
  devpass::bench::flat_propagate(std::move(p.flat), &result, &was);
  write_result(p, result, was, argv[3]);
  return 0;
}
