// The reader's two paths (json_reader.hpp): the streaming path builds the very graph the DOM path
// builds, edge order included, whatever the batch size; it hands over wherever the DOM path would
// reject the text; and the layout scan does not depend on where its blocks end.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "devpass/io/json_reader.hpp"
#include "graph_dir.hpp"

using namespace devpass;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::filesystem::path> repository_graphs() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(devpass::testing_support::graph_dir()))
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Same nodes in the same vertex order, same edges in the same order (the edge list and each
// vertex's in- and out-edge lists): what passes iterate, so what decides their output.
void check_identical(const graph& a, const graph& b) {
  CHECK(method_name(a) == method_name(b));
  REQUIRE(boost::num_vertices(a) == boost::num_vertices(b));
  REQUIRE(boost::num_edges(a) == boost::num_edges(b));
  for (vertex v = 0; v < boost::num_vertices(a); ++v) {
    INFO("vertex " << v << " '" << a[v].id << "'");
    CHECK(a[v].id == b[v].id);
    CHECK(a[v].op == b[v].op);
    CHECK(a[v].device == b[v].device);
    CHECK(a[v].kernel == b[v].kernel);
    CHECK(a[v].outputs == b[v].outputs);
    CHECK(a[v].attrs == b[v].attrs);
    CHECK(a[v].arity == b[v].arity);
    const auto ends = [](const graph& g, auto range) {
      std::vector<std::tuple<vertex, vertex, std::uint32_t, std::uint32_t>> list;
      for (const auto e : boost::make_iterator_range(range))
        list.emplace_back(boost::source(e, g), boost::target(e, g), g[e].slot, g[e].output);
      return list;
    };
    CHECK(ends(a, boost::out_edges(v, a)) == ends(b, boost::out_edges(v, b)));
    CHECK(ends(a, boost::in_edges(v, a)) == ends(b, boost::in_edges(v, b)));
  }
  const auto all = [](const graph& g) {
    std::vector<std::pair<vertex, vertex>> list;
    for (const auto e : boost::make_iterator_range(boost::edges(g)))
      list.emplace_back(boost::source(e, g), boost::target(e, g));
    return list;
  };
  CHECK(all(a) == all(b));
}

std::string doc(const std::string& nodes) {
  return R"({"format":"devpass.graph/1","name":"t","nodes":[)" + nodes + "]}";
}
const std::string input_x = R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2,2]}]})";
const std::string output_x = R"({"id":"out","op":"output","inputs":["x"]})";

// Whether the streaming path takes `json` (and then builds what the DOM path builds).
bool streams(const std::string& json, std::size_t batch_bytes = detail::stream_batch_bytes) {
  graph streamed;
  if (!detail::read_graph_string_streaming(json, "t.json", streamed, batch_bytes)) return false;
  check_identical(streamed, detail::read_graph_string_dom(json, "t.json"));
  return true;
}

// Whether the DOM path accepts `json`.
bool dom_accepts(const std::string& json) {
  try {
    (void)detail::read_graph_string_dom(json, "t.json");
    return true;
  } catch (const graph_error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("streaming reader: every repository graph streams into the DOM path's graph, in batches of any size") {
  const auto paths = repository_graphs();
  REQUIRE(paths.size() > 10);
  for (const auto& path : paths) {
    INFO(path.string());
    const std::string text = slurp(path);
    for (const std::size_t batch : {std::size_t{0}, std::size_t{100}, std::size_t{4096}, detail::stream_batch_bytes})
      CHECK(streams(text, batch));
  }
}

TEST_CASE("streaming reader: forward references and odd spacing stream") {
  // Every edge after the first forward reference waits for the last node, as in the DOM path.
  CHECK(streams(doc(R"({"id":"out","op":"output","inputs":["d:1","x"]},)" + input_x + R"(,
    {"id":"d","op":"delegate","device":"cuda:1","kernel":"split","inputs":["x:0","x"],
     "outputs":[{"dtype":"float16","shape":[1]},{"dtype":"int8","shape":[3]}]})"),
                0));
  CHECK(streams(" \n{ \"format\" : \"devpass.graph/1\" ,\t\"name\":\"a,]}\\\"nodes\\\":[\",\r\n \"nodes\" : [ " +
                input_x + " , " + output_x + " ] \n} \n"));
}

TEST_CASE("streaming reader: a layout it does not take goes to the DOM path, which reads it") {
  const std::string nodes_first =
      R"({"nodes":[)" + input_x + "," + output_x + R"(],"format":"devpass.graph/1","name":"t"})";
  const std::string escaped_key =
      R"({"format":"devpass.graph/1","name":"t","\u006eodes":[)" + input_x + "," + output_x + "]}";
  for (const std::string& json : {nodes_first, escaped_key}) {
    CHECK_FALSE(streams(json));
    CHECK(boost::num_vertices(read_graph_string(json)) == 2);
  }
}

TEST_CASE("streaming reader: hands over wherever the DOM path rejects the text") {
  const std::vector<std::string> rejected = {
      "",
      "[]",
      doc(input_x + "," + output_x) + " x",
      doc(input_x + "," + output_x + ","),
      doc("," + input_x + "," + output_x),
      doc(input_x + "," + output_x).substr(0, 60),
      R"({"format":"devpass.graph/1","name":"t","nodes":[],"nodes":[]})",
      R"({"format":"devpass.graph/1","nodes":[],"name":"t","nodes":[)" + input_x + "," + output_x + "]}",
      doc(input_x + "," + output_x + "," + input_x),
      doc(input_x + "," + R"({"id":"out","op":"output","inputs":["y"]})")};
  for (const std::string& json : rejected) {
    INFO(json);
    CHECK_FALSE(dom_accepts(json));
    CHECK_FALSE(streams(json, 0));
    CHECK_FALSE(streams(json));
  }
}

TEST_CASE("streaming reader: the nesting limit is the DOM path's") {
  // attrs nested `levels` deep around the parser's limit: the two paths agree at every depth.
  for (std::size_t levels = 1015; levels < 1025; ++levels) {
    INFO("levels " << levels);
    const std::string attrs = R"({"a":)" + std::string(levels, '[') + std::string(levels, ']') + "}";
    const std::string json =
        doc(input_x + R"(,{"id":"d","op":"call","kernel":"k","inputs":["x"],"attrs":)" + attrs +
            R"(,"outputs":[{"dtype":"float32","shape":[2,2]}]},{"id":"out","op":"output","inputs":["d"]})");
    CHECK(dom_accepts(json) == streams(json, 0));
  }
}

TEST_CASE("node layout: the same cuts wherever the blocks of text end") {
  const std::string text = slurp(devpass::testing_support::graph_path("cases/multi_output.json"));
  // Escapes, brackets and commas inside strings must not move the cuts.
  const std::string json =
      doc(R"({"id":"a\\\"],[{","op":"input","kernel":"\"\\","outputs":[{"dtype":"float32","shape":[2,2]}]},)" +
          std::string(R"({"id":"out","op":"output","inputs":["a\\\"],[{"]})"));
  for (const std::string& sample : {text, json}) {
    detail::memory_source whole(sample);
    const auto expected = detail::scan_node_layout(whole, 0);
    REQUIRE(expected);
    for (const std::size_t block : {1u, 2u, 3u, 7u, 64u}) {
      detail::memory_source source(sample);
      const auto layout = detail::scan_node_layout(source, 0, block);
      REQUIRE(layout);
      CHECK(layout->nodes_open == expected->nodes_open);
      CHECK(layout->count == expected->count);
      CHECK(layout->ends == expected->ends);
      CHECK(layout->size == sample.size());
    }
  }
  CHECK(streams(json, 0));
}

TEST_CASE("node layout: 64-byte chunks cut where the scan a byte at a time cuts") {
  // A long array whose strings hold brackets, commas and quotes, plain or escaped, at every offset
  // from a chunk's start: blocks of fewer than 64 bytes are scanned a byte at a time, whole blocks
  // 64 bytes at a time where no backslash is.
  std::string nodes = input_x;
  for (int k = 0; k < 400; ++k) {
    const std::string pad(static_cast<std::size_t>(k % 71), 'a');
    // Every third id ends in an escaped quote after brackets and a comma.
    const std::string id = "n" + std::to_string(k) + pad + (k % 3 == 0 ? "[,{]}\\\"" : "");
    nodes += R"(,{"id":")" + id + R"(","op":"call","kernel":")" + (k % 2 ? "k],[{" : "k") +
             R"(","inputs":["x"],"attrs":{"a":[1,[2,{"b":","}]]},"outputs":[{"dtype":"float32","shape":[2,2]}]})";
  }
  nodes += R"(,{"id":"out","op":"output","inputs":["x"]})";
  const std::string json = doc(nodes);
  for (const std::size_t batch : {std::size_t{0}, std::size_t{100}, std::size_t{1000}, std::size_t{1} << 20}) {
    CAPTURE(batch);
    detail::memory_source whole(json);
    const auto chunked = detail::scan_node_layout(whole, batch);
    REQUIRE(chunked);
    CHECK(chunked->count == 402);
    for (const std::size_t block : {1u, 7u, 63u, 64u, 100u, 4096u}) {
      CAPTURE(block);
      detail::memory_source source(json);
      const auto layout = detail::scan_node_layout(source, batch, block);
      REQUIRE(layout);
      CHECK(layout->nodes_open == chunked->nodes_open);
      CHECK(layout->count == chunked->count);
      CHECK(layout->ends == chunked->ends);
    }
  }
  CHECK(streams(json, 0));
  CHECK(streams(json, 1000));
  // Text after the array that is not the closing brace: refused by either way of scanning.
  const std::string with_trailing = json + "]";  // memory_source keeps a view: the text outlives it
  detail::memory_source trailing(with_trailing);
  CHECK_FALSE(detail::scan_node_layout(trailing, 0));
}

TEST_CASE("streaming reader: ids hashed ahead of their nodes find every duplicate and reference") {
  // Each node's id is hashed a few nodes early (json_graph_reader's look_ahead): a duplicate right
  // after its first, one far past the look-ahead, and references back, in batches of every size.
  const auto call = [](const std::string& id, const std::string& input) {
    return R"(,{"id":")" + id + R"(","op":"call","kernel":"k","inputs":[")" + input +
           R"("],"outputs":[{"dtype":"float32","shape":[2,2]}]})";
  };
  std::string nodes = input_x;
  for (int k = 0; k < 200; ++k) nodes += call("c" + std::to_string(k), k == 0 ? "x" : "c" + std::to_string(k - 1));
  const std::string good = doc(nodes + R"(,{"id":"out","op":"output","inputs":["c199"]})");
  const std::string near = doc(nodes + call("c199", "x") + R"(,{"id":"out","op":"output","inputs":["c0"]})");
  const std::string far = doc(nodes + call("c3", "x") + R"(,{"id":"out","op":"output","inputs":["c0"]})");
  // Two id fields: read_node refuses the node; what was hashed ahead (the first) is not used.
  const std::string two_ids =
      doc(input_x + R"(,{"id":"a","id":"b","op":"call","kernel":"k","inputs":["x"],"outputs":[]})" +
          R"(,{"id":"out","op":"output","inputs":["x"]})");
  for (const std::size_t batch : {std::size_t{0}, std::size_t{300}, detail::stream_batch_bytes}) {
    CAPTURE(batch);
    CHECK(streams(good, batch));
    graph g;
    CHECK_FALSE(detail::read_graph_string_streaming(near, "t.json", g, batch));
    CHECK_FALSE(detail::read_graph_string_streaming(far, "t.json", g, batch));
    CHECK_FALSE(detail::read_graph_string_streaming(two_ids, "t.json", g, batch));
  }
  CHECK_FALSE(dom_accepts(near));
  CHECK_FALSE(dom_accepts(far));
  CHECK_FALSE(dom_accepts(two_ids));
}
