#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "devpass/io/json_reader.hpp"
#include "graph_dir.hpp"

using namespace devpass;

namespace {

// A document around the given node objects (comma-separated JSON text).
std::string doc(const std::string& nodes) {
  return R"({"format":"devpass.graph/1","name":"t","nodes":[)" + nodes + "]}";
}
const std::string input_x = R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2,2]}]})";
std::string output_of(const std::string& ref) { return R"({"id":"out","op":"output","inputs":[")" + ref + R"("]})"; }
// input x -> <middle nodes> -> output reading `last`
std::string chain(const std::string& middle, const std::string& last) {
  return doc(input_x + "," + middle + (middle.empty() ? "" : ",") + output_of(last));
}

std::optional<graph_error> error_of(const std::string& json) {
  try {
    (void)read_graph_string(json, "t.json");
  } catch (const graph_error& e) {
    return e;
  }
  return std::nullopt;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// Checks that `json` is rejected naming exactly `node_id` and `field`, with `problem` in the text.
#define CHECK_REJECTED(json, node_id, field_name, problem_text)                                               \
  do {                                                                                                        \
    const auto err = error_of(json);                                                                          \
    REQUIRE_MESSAGE(err.has_value(), "accepted: " << (json));                                                 \
    CHECK(err->file() == "t.json");                                                                           \
    CHECK(err->node() == (node_id));                                                                          \
    CHECK(err->field() == (field_name));                                                                      \
    CHECK_MESSAGE(err->problem().find(problem_text) != std::string::npos, "problem was: " << err->problem()); \
  } while (false)

TEST_CASE("reader: reads a sample graph in file order with its edges") {
  const graph g = read_graph_file(devpass::testing_support::graph_path("cases/two_adds.json"));
  CHECK(method_name(g) == "two_adds");
  REQUIRE(boost::num_vertices(g) == 6);
  const char* ids[] = {"x", "w", "d0", "d1", "r", "out"};
  for (vertex v = 0; v < 6; ++v) CHECK(g[v].id == ids[v]);
  CHECK(g[0].op == op_kind::input);
  CHECK(g[1].op == op_kind::constant);
  CHECK(g[2].op == op_kind::delegate);
  CHECK(g[2].device == cuda_device(0));
  CHECK(g[2].kernel == "add");
  CHECK(g[4].op == op_kind::call);
  CHECK(g[4].device == cpu_device);
  CHECK(g[5].op == op_kind::output);
  CHECK(g[5].outputs.empty());
  CHECK(boost::num_edges(g) == 7);
  CHECK(operands(g, 3) == std::vector<value_ref>{{2, 0}, {1, 0}});
  CHECK(method_outputs(g) == std::vector<value_ref>{{4, 0}, {3, 0}});
  CHECK(g[0].outputs == std::vector<tensor_spec>{{dtype::float32, {2, 2}}});
}

TEST_CASE("reader: references may point forward and name outputs by index") {
  const graph g = read_graph_string(doc(output_of("d:1") + "," + input_x + R"(,
    {"id":"d","op":"delegate","device":"CUDA:1","kernel":"split","inputs":["x:0"],
     "outputs":[{"dtype":"float16","shape":[1]},{"dtype":"int8","shape":[3]}]})"));
  REQUIRE(boost::num_vertices(g) == 3);
  CHECK(g[0].id == "out");
  CHECK(g[2].device == cuda_device(1));
  CHECK(operands(g, 0) == std::vector<value_ref>{{2, 1}});
  CHECK(operands(g, 2) == std::vector<value_ref>{{1, 0}});
}

TEST_CASE("reader: the device \"cuda\" means cuda:0") {
  const graph g = read_graph_string(chain(R"({"id":"d","op":"delegate","device":"cuda","kernel":"k","inputs":["x"],
    "outputs":[{"dtype":"float32","shape":[2,2]}]})",
                                          "d"));
  CHECK(g[1].device == cuda_device(0));
}

TEST_CASE("reader: tensor specs keep device, mem_id and offset") {
  const graph g = read_graph_string(doc(
      R"({"id":"x","op":"input","outputs":[{"dtype":"bool","shape":[],"device":"cuda:2","mem_id":3,"offset":4096}]},)" +
      output_of("x")));
  const tensor_spec& s = g[0].outputs.at(0);
  CHECK(s.type == dtype::bool_);
  CHECK(s.shape.empty());
  CHECK(s.device == cuda_device(2));
  CHECK(s.mem_id == 3);
  CHECK(s.offset == 4096);
  CHECK_FALSE(g[0].outputs == std::vector<tensor_spec>{{dtype::bool_, {}}});
}

TEST_CASE("reader: attrs are kept as minified JSON text") {
  const graph g = read_graph_string(chain(R"({"id":"d","op":"delegate","device":"cuda:0","kernel":"k","inputs":["x"],
    "outputs":[{"dtype":"float32","shape":[2,2]}],
    "attrs": { "spec" : [1, 2, {"a": "b\"c"}],  "flag":true, "none" : null }})",
                                          "d"));
  CHECK(g[1].attrs == R"({"spec":[1,2,{"a":"b\"c"}],"flag":true,"none":null})");
  CHECK(g[0].attrs.empty());
}

TEST_CASE("reader: the error message names file, node and field") {
  const auto err = error_of(doc(input_x + "," + input_x));
  REQUIRE(err);
  CHECK(std::string(err->what()) == "t.json: node 'x': id: duplicate id (also nodes[0])");
}

TEST_CASE("reader: a structural problem is a structure_error carrying every problem of the file") {
  // Two calls placed on devices: the message is the first problem; the report has both, in order.
  const std::string json = chain(R"({"id":"a","op":"call","device":"cuda:1","kernel":"k","inputs":["x"],)"
                                 R"("outputs":[{"dtype":"float32","shape":[2,2]}]},)"
                                 R"({"id":"b","op":"call","device":"cuda:2","kernel":"k","inputs":["a"],)"
                                 R"("outputs":[{"dtype":"float32","shape":[2,2]}]})",
                                 "b");
  try {
    (void)read_graph_string(json, "t.json");
    FAIL("accepted");
  } catch (const structure_error& e) {
    CHECK(e.file() == "t.json");
    CHECK(e.node() == "a");
    REQUIRE(e.report().problems.size() == 2);
    CHECK(e.report().problems[0].node() == "a");
    CHECK(e.report().problems[1].node() == "b");
    CHECK(e.report().problems[1].field() == "device");
    CHECK(std::string(e.what()) == "t.json: " + std::string(e.report().problems[0].what()));
  }
  // A parse problem stops the reader where it is: a plain graph_error, not a structure_error.
  bool parse_error_is_structural = false;
  try {
    (void)read_graph_string(doc(input_x + "," + input_x), "t.json");
  } catch (const structure_error&) {
    parse_error_is_structural = true;
  } catch (const graph_error&) {}
  CHECK_FALSE(parse_error_is_structural);
}

TEST_CASE("reader: rejects a wrong format") {
  CHECK_REJECTED(R"({"format":"devpass.graph/2","name":"t","nodes":[]})", "", "format",
                 "expected \"devpass.graph/1\", found 'devpass.graph/2'");
  CHECK_REJECTED(R"({"name":"t","nodes":[]})", "", "format", "missing");
  CHECK_REJECTED(R"({"format":1,"name":"t","nodes":[]})", "", "format", "expected a string, found a number");
}

TEST_CASE("reader: rejects a document that is not an object") {
  CHECK_REJECTED("[1,2]", "", "", "expected an object, found an array");
}

TEST_CASE("reader: rejects a missing name or nodes list") {
  CHECK_REJECTED(R"({"format":"devpass.graph/1","nodes":[]})", "", "name", "missing");
  CHECK_REJECTED(R"({"format":"devpass.graph/1","name":"t"})", "", "nodes", "missing");
  CHECK_REJECTED(R"({"format":"devpass.graph/1","name":"t","nodes":{}})", "", "nodes",
                 "expected an array, found an object");
}

TEST_CASE("reader: rejects an unknown top-level field") {
  CHECK_REJECTED(R"({"format":"devpass.graph/1","name":"t","nodes":[],"version":2})", "", "version", "unknown field");
}

TEST_CASE("reader: rejects a duplicate top-level field") {
  CHECK_REJECTED(R"({"format":"devpass.graph/1","name":"t","name":"u","nodes":[]})", "", "name", "duplicate field");
}

TEST_CASE("reader: rejects a node that is not an object") {
  CHECK_REJECTED(doc(input_x + ",3"), "", "nodes[1]", "expected an object, found a number");
}

TEST_CASE("reader: rejects a missing id") {
  CHECK_REJECTED(doc(input_x + R"(,{"op":"output","inputs":["x"]})"), "", "nodes[1].id", "missing");
}

TEST_CASE("reader: rejects an empty id") {
  CHECK_REJECTED(doc(input_x + R"(,{"id":"","op":"output","inputs":["x"]})"), "", "nodes[1].id", "empty id");
}

TEST_CASE("reader: rejects an id that is not a string") {
  CHECK_REJECTED(doc(input_x + R"(,{"id":7,"op":"output","inputs":["x"]})"), "", "nodes[1].id",
                 "expected a string, found a number");
}

TEST_CASE("reader: rejects a duplicate id") {
  CHECK_REJECTED(doc(input_x + "," + input_x + "," + output_of("x")), "x", "id", "duplicate id (also nodes[0])");
}

TEST_CASE("reader: rejects an id that reads as an output reference") {
  CHECK_REJECTED(
      chain(R"({"id":"d:1","op":"call","kernel":"k","inputs":["x"],"outputs":[{"dtype":"float32","shape":[1]}]})", "x"),
      "d:1", "id", "cannot end in ':<digits>'");
}

TEST_CASE("reader: rejects a missing or unknown op") {
  CHECK_REJECTED(chain(R"({"id":"d","kernel":"k","inputs":["x"]})", "x"), "d", "op", "missing");
  CHECK_REJECTED(chain(R"({"id":"d","op":"matmul","inputs":["x"]})", "x"), "d", "op", "unknown op 'matmul'");
}

TEST_CASE("reader: rejects an unknown node field") {
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x"],"stream":2})", "x"), "d", "stream",
                 "unknown field");
}

TEST_CASE("reader: rejects a duplicate node field") {
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k","kernel":"j","inputs":["x"]})", "x"), "d", "kernel",
                 "duplicate field");
}

TEST_CASE("reader: rejects a bad node device") {
  CHECK_REJECTED(chain(R"({"id":"d","op":"delegate","device":"tpu:0","kernel":"k","inputs":["x"]})", "x"), "d",
                 "device", "unknown device 'tpu:0'");
  CHECK_REJECTED(chain(R"({"id":"d","op":"delegate","device":"cuda:-1","kernel":"k","inputs":["x"]})", "x"), "d",
                 "device", "unknown device 'cuda:-1'");
  CHECK_REJECTED(chain(R"({"id":"d","op":"delegate","device":0,"kernel":"k","inputs":["x"]})", "x"), "d", "device",
                 "expected a string, found a number");
}

TEST_CASE("reader: rejects a bad tensor spec device") {
  CHECK_REJECTED(
      doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[1],"device":"gpu"}]},)" + output_of("x")),
      "x", "outputs[0].device", "unknown device 'gpu'");
}

TEST_CASE("reader: rejects an unknown dtype") {
  CHECK_REJECTED(
      doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[1]},{"dtype":"float8","shape":[1]}]},)" +
          output_of("x")),
      "x", "outputs[1].dtype", "unknown dtype 'float8'");
}

TEST_CASE("reader: rejects a negative dimension") {
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2,-2]}]},)" + output_of("x")),
                 "x", "outputs[0].shape[1]", "negative dimension -2");
}

TEST_CASE("reader: rejects a dimension that is not an integer") {
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2.5]}]},)" + output_of("x")), "x",
                 "outputs[0].shape[0]", "dimension is not an integer");
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":["2"]}]},)" + output_of("x")), "x",
                 "outputs[0].shape[0]", "expected an integer, found a string");
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[18446744073709551615]}]},)" +
                     output_of("x")),
                 "x", "outputs[0].shape[0]", "dimension 18446744073709551615 is larger than 9223372036854775807");
}

TEST_CASE("reader: rejects a shape whose byte size overflows") {
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[4294967296,4294967296]}]},)" +
                     output_of("x")),
                 "x", "outputs[0].shape", "byte size does not fit in 63 bits");
}

TEST_CASE("reader: rejects a tensor spec with a missing or unknown field") {
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"shape":[1]}]},)" + output_of("x")), "x", "outputs[0].dtype",
                 "missing");
  CHECK_REJECTED(doc(R"({"id":"x","op":"input","outputs":[{"dtype":"int8"}]},)" + output_of("x")), "x",
                 "outputs[0].shape", "missing");
  CHECK_REJECTED(
      doc(R"({"id":"x","op":"input","outputs":[{"dtype":"int8","shape":[1],"stride":[1]}]},)" + output_of("x")), "x",
      "outputs[0].stride", "unknown field");
}

TEST_CASE("reader: rejects a bad mem_id or offset") {
  CHECK_REJECTED(
      doc(R"({"id":"x","op":"input","outputs":[{"dtype":"int8","shape":[1],"mem_id":-1}]},)" + output_of("x")), "x",
      "outputs[0].mem_id", "negative mem_id -1");
  CHECK_REJECTED(
      doc(R"({"id":"x","op":"input","outputs":[{"dtype":"int8","shape":[1],"mem_id":4294967296}]},)" + output_of("x")),
      "x", "outputs[0].mem_id", "mem_id 4294967296 is larger than 2147483647");
  CHECK_REJECTED(
      doc(R"({"id":"x","op":"input","outputs":[{"dtype":"int8","shape":[1],"offset":-16}]},)" + output_of("x")), "x",
      "outputs[0].offset", "negative offset -16");
}

TEST_CASE("reader: rejects a reference to a node that does not exist") {
  CHECK_REJECTED(
      chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x","y"],"outputs":[{"dtype":"int8","shape":[1]}]})", "d"),
      "d", "inputs[1]", "reference 'y' names no node");
}

TEST_CASE("reader: rejects a reference to an output that does not exist") {
  CHECK_REJECTED(
      chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x:1"],"outputs":[{"dtype":"int8","shape":[1]}]})", "d"),
      "d", "inputs[0]", "reference 'x:1' names output 1 of 'x', which has 1 output(s)");
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x:99999999999999999999"]})", "x"), "d",
                 "inputs[0]", "names output 99999999999999999999 of 'x'");
  CHECK_REJECTED(
      doc(input_x +
          R"(,{"id":"out","op":"output","inputs":["x"]},{"id":"z","op":"call","kernel":"k","inputs":["out"]})"),
      "z", "inputs[0]", "reference 'out' names node 'out', which has no outputs");
}

TEST_CASE("reader: rejects a reference that is not a string") {
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x",1]})", "x"), "d", "inputs[1]",
                 "expected a string, found a number");
}

TEST_CASE("reader: rejects a graph without an output node") {
  CHECK_REJECTED(doc(input_x), "", "nodes", "no output node");
}

TEST_CASE("reader: rejects a second output node") {
  CHECK_REJECTED(doc(input_x + "," + output_of("x") + R"(,{"id":"out2","op":"output","inputs":["x"]})"), "out2", "op",
                 "a second output node (the first is 'out')");
}

TEST_CASE("reader: rejects an input or constant with inputs") {
  CHECK_REJECTED(chain(R"({"id":"i","op":"input","inputs":["x"],"outputs":[{"dtype":"int8","shape":[1]}]})", "i"), "i",
                 "inputs", "takes no inputs, found 1");
  CHECK_REJECTED(chain(R"({"id":"c","op":"constant","inputs":["x"],"outputs":[{"dtype":"int8","shape":[1]}]})", "c"),
                 "c", "inputs", "takes no inputs, found 1");
}

TEST_CASE("reader: rejects a copy without exactly one input") {
  CHECK_REJECTED(chain(R"({"id":"c","op":"h2d_copy","device":"cuda:0","inputs":["x","x"],
    "outputs":[{"dtype":"float32","shape":[2,2]}]})",
                       "c"),
                 "c", "inputs", "a h2d_copy has exactly one input, found 2");
  CHECK_REJECTED(
      chain(R"({"id":"c","op":"d2d_copy","device":"cuda:1","outputs":[{"dtype":"float32","shape":[2,2]}]})", "c"), "c",
      "inputs", "a d2d_copy has exactly one input, found 0");
}

TEST_CASE("reader: rejects a copy without exactly one output") {
  CHECK_REJECTED(chain(R"({"id":"c","op":"d2h_copy","device":"cuda:0","inputs":["x"],
    "outputs":[{"dtype":"float32","shape":[2,2]},{"dtype":"float32","shape":[2,2]}]})",
                       "c"),
                 "c", "outputs", "a d2h_copy has exactly one output, found 2");
}

TEST_CASE("reader: rejects a copy that changes the layout") {
  CHECK_REJECTED(chain(R"({"id":"c","op":"h2d_copy","device":"cuda:0","inputs":["x"],
    "outputs":[{"dtype":"float16","shape":[2,2]}]})",
                       "c"),
                 "c", "outputs", "input is float32[2,2], output is float16[2,2]");
}

TEST_CASE("reader: a copy may be resident: made once, at load, from a constant") {
  const std::string constant = R"({"id":"w","op":"constant","outputs":[{"dtype":"float32","shape":[2,2]}]})";
  const std::string copy = R"({"id":"w@h2d","op":"h2d_copy","device":"cuda:0","resident":true,"inputs":["w"],
    "outputs":[{"dtype":"float32","shape":[2,2]}]})";
  const graph g = read_graph_string(doc(constant + "," + copy + "," + output_of("w@h2d")));
  CHECK(g[*find_node(g, "w@h2d")].resident);
  CHECK_FALSE(g[*find_node(g, "w")].resident);
  const std::string not_resident = R"({"id":"w@h2d","op":"h2d_copy","device":"cuda:0","resident":false,
    "inputs":["w"],"outputs":[{"dtype":"float32","shape":[2,2]}]})";
  CHECK_FALSE(read_graph_string(doc(constant + "," + not_resident + "," + output_of("w@h2d")))[1].resident);
}

TEST_CASE("reader: rejects a resident field that is not a boolean, or on what is not a copy of a constant") {
  CHECK_REJECTED(chain(R"({"id":"c","op":"h2d_copy","device":"cuda:0","resident":1,"inputs":["x"],
    "outputs":[{"dtype":"float32","shape":[2,2]}]})",
                       "c"),
                 "c", "resident", "expected a boolean, found a number");
  CHECK_REJECTED(chain(R"({"id":"c","op":"h2d_copy","device":"cuda:0","resident":true,"inputs":["x"],
    "outputs":[{"dtype":"float32","shape":[2,2]}]})",
                       "c"),
                 "c", "resident", "a resident copy is made once, at load: it must copy a constant, not the input 'x'");
  CHECK_REJECTED(chain(R"({"id":"d","op":"delegate","device":"cuda:0","resident":true,"kernel":"k","inputs":["x"],
    "outputs":[{"dtype":"float32","shape":[2,2]}]})",
                       "d"),
                 "d", "resident", "only a copy can be resident, not a delegate");
}

TEST_CASE("reader: rejects a copy on the host") {
  CHECK_REJECTED(
      chain(R"({"id":"c","op":"h2d_copy","inputs":["x"],"outputs":[{"dtype":"float32","shape":[2,2]}]})", "c"), "c",
      "device", "a h2d_copy needs a device side, not cpu");
}

TEST_CASE("reader: rejects an output node with outputs") {
  CHECK_REJECTED(
      doc(input_x + R"(,{"id":"out","op":"output","inputs":["x"],"outputs":[{"dtype":"int8","shape":[1]}]})"), "out",
      "outputs", "the output node has no outputs, found 1");
}

TEST_CASE("reader: rejects a delegate or call without a kernel") {
  CHECK_REJECTED(
      chain(R"({"id":"d","op":"delegate","device":"cuda:0","inputs":["x"],"outputs":[{"dtype":"int8","shape":[1]}]})",
            "d"),
      "d", "kernel", "a delegate needs a kernel name");
  CHECK_REJECTED(chain(R"({"id":"c","op":"call","inputs":["x"],"outputs":[{"dtype":"int8","shape":[1]}]})", "c"), "c",
                 "kernel", "a call needs a kernel name");
}

TEST_CASE("reader: rejects a call placed on a device") {
  CHECK_REJECTED(chain(R"({"id":"c","op":"call","device":"cuda:0","kernel":"k","inputs":["x"],
    "outputs":[{"dtype":"int8","shape":[1]}]})",
                       "c"),
                 "c", "device", "a call runs on the host, not on cuda:0");
}

TEST_CASE("reader: rejects a cycle, naming a node on it") {
  const std::string spec = R"("outputs":[{"dtype":"float32","shape":[2,2]}])";
  const auto err = error_of(chain(R"({"id":"a","op":"call","kernel":"k","inputs":["x","b"],)" + spec + "}," +
                                      R"({"id":"b","op":"call","kernel":"k","inputs":["a"],)" + spec + "}," +
                                      R"({"id":"c","op":"call","kernel":"k","inputs":["b"],)" + spec + "}",
                                  "c"));
  REQUIRE(err);
  CHECK(err->file() == "t.json");
  CHECK((err->node() == "a" || err->node() == "b"));
  CHECK(err->field() == "inputs");
  CHECK(err->problem() == "cycle: the node depends on itself");
}

TEST_CASE("reader: rejects attrs that are not an object") {
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x"],"attrs":[1]})", "x"), "d", "attrs",
                 "expected an object, found an array");
}

TEST_CASE("reader: rejects invalid UTF-8") {
  // A byte that never occurs in UTF-8, then a lead byte without its continuation byte.
  std::string json = chain(std::string(R"({"id":"d","op":"call","kernel":"k)") + "\xff" + R"(","inputs":["x"]})", "x");
  CHECK_REJECTED(json, "", "", "invalid JSON: the text is not valid UTF-8");
  json = chain(std::string(R"({"id":"d","op":"call","kernel":"k)") + "\xc3" + R"(","inputs":["x"]})", "x");
  CHECK_REJECTED(json, "", "", "invalid JSON: the text is not valid UTF-8");
  // An escape is not UTF-8 trouble: it is reported as a bad string.
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k\q","inputs":["x"]})", "x"), "", "", "invalid JSON");
}

TEST_CASE("reader: rejects nesting deeper than the parser's limit without crashing") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_REJECTED(chain(R"({"id":"d","op":"call","kernel":"k","inputs":["x"],"attrs":{"a":)" + deep + "}}", "x"), "", "",
                 "nested deeper than 1024 levels");
  CHECK_REJECTED(std::string(5000, '{'), "", "", "invalid JSON");
}

TEST_CASE("reader: rejects empty text and trailing garbage") {
  CHECK_REJECTED("", "", "", "invalid JSON");
  CHECK_REJECTED("   ", "", "", "invalid JSON");
  CHECK_REJECTED(doc(input_x + "," + output_of("x")) + " x", "", "", "invalid JSON");
}

TEST_CASE("reader: rejects every truncation of a valid file without crashing") {
  const std::string text = slurp(devpass::testing_support::graph_path("cases/multi_output.json"));
  REQUIRE(text.size() > 500);
  (void)read_graph_string(text);  // the whole file is fine
  // A prefix that still ends in the closing brace plus whitespace is the whole document.
  const std::size_t end = text.find_last_of('}') + 1;
  std::size_t rejected = 0;
  for (std::size_t n = 0; n < end; ++n) {
    const auto err = error_of(text.substr(0, n));
    if (err)
      ++rejected;
    else
      FAIL("prefix of " << n << " bytes was accepted");
  }
  CHECK(rejected == end);
}

TEST_CASE("reader: reports a missing file with its path") {
  const std::string path = (std::filesystem::temp_directory_path() / "devpass_no_such_file.json").string();
  try {
    (void)read_graph_file(path);
    FAIL("a missing file was read");
  } catch (const graph_error& e) {
    CHECK(e.file() == path);
    CHECK(e.problem() == "cannot open the file");
  }
}

TEST_CASE("reader: error messages from a file name that file") {
  const std::string path = (std::filesystem::temp_directory_path() / "devpass_reader_bad.json").string();
  {
    std::ofstream out(path);
    out << doc(input_x);
  }
  try {
    (void)read_graph_file(path);
    FAIL("a graph without an output node was read");
  } catch (const graph_error& e) {
    CHECK(std::string(e.what()) == path + ": nodes: no output node");
  }
  std::filesystem::remove(path);
}
