// devpass/io/json_reader.hpp — reads a devpass.graph/1 file (docs/file-format.md) into a graph.
//
//   read_graph_file(path)            path "-" reads standard input
//   read_graph_string(json, label)   label names the text in messages
// Each takes read_options last (io/read_options.hpp: how the graph's storage is backed).
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
#error \
    "devpass: the devpass.graph/1 reader needs simdjson, which was not found when devpass was configured: install it (Debian: libsimdjson-dev) and configure again"
#endif

#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify_structure.hpp"
#include "devpass/io/detail/json_graph_reader.hpp"
#include "devpass/io/detail/text_source.hpp"
#include "devpass/io/read_options.hpp"

namespace devpass {

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
                                                      std::size_t batch_bytes = stream_batch_bytes,
                                                      read_options options = {}) {
  memory_source source(json);
  return json_graph_reader(file_label, options).read_streaming(source, batch_bytes, g);
}

// read_graph_string's work, into `g`.
inline void read_text_into(std::string_view json, std::string_view file_label, graph& g, read_options options) {
  if (!read_graph_string_streaming(json, file_label, g, stream_batch_bytes, options)) {
    const simdjson::padded_string text(json);
    json_graph_reader(file_label, options).read_dom(text, g);
  }
  verify_read(g, file_label);
}
}  // namespace detail

// Reads a graph from JSON text; `file_label` names it in error messages.
[[nodiscard]] inline graph read_graph_string(std::string_view json, std::string_view file_label = "<string>",
                                             read_options options = {}) {
  graph g;  // one named result, returned from one place: elided, never copied
  detail::read_text_into(json, file_label, g, options);
  return g;
}

// Reads a graph from a file; "-" reads standard input (named "<stdin>" in messages).
[[nodiscard]] inline graph read_graph_file(const std::string& path, read_options options = {}) {
  graph g;
  if (path == "-") {
    std::string data{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    if (std::cin.bad()) throw graph_error("<stdin>", "", "", "cannot read standard input");
    detail::read_text_into(data, "<stdin>", g, options);
    return g;
  }
  bool streamed = false;
  if (detail::file_source source(path); source.is_open())
    streamed = detail::json_graph_reader(path, options).read_streaming(source, detail::stream_batch_bytes, g);
  if (!streamed) {
    // The whole file in memory, for the DOM path: it words whatever the problem is.
    simdjson::padded_string text;
    if (simdjson::padded_string::load(path).get(text)) {
      std::FILE* probe = std::fopen(path.c_str(), "rb");
      if (probe) std::fclose(probe);
      throw graph_error(path, "", "", probe ? "cannot read the file" : "cannot open the file");
    }
    detail::json_graph_reader(path, options).read_dom(text, g);
  }
  detail::verify_read(g, path);
  return g;
}

}  // namespace devpass
