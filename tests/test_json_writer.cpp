#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"
#include "graph_dir.hpp"

using namespace devpass;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two graphs are the same when the nodes with the same id agree on everything and read the same
// values (named by producer id), whatever their vertex order.
void check_same_graph(const graph& a, const graph& b) {
  CHECK(method_name(a) == method_name(b));
  REQUIRE(boost::num_vertices(a) == boost::num_vertices(b));
  std::map<std::string, vertex> in_b;
  for (const auto v : boost::make_iterator_range(boost::vertices(b))) in_b[b[v].id] = v;
  for (const auto v : boost::make_iterator_range(boost::vertices(a))) {
    const node& x = a[v];
    INFO("node " << x.id);
    REQUIRE(in_b.count(x.id) == 1);
    const vertex w = in_b[x.id];
    const node& y = b[w];
    CHECK(x.op == y.op);
    CHECK(x.device == y.device);
    CHECK(x.resident == y.resident);
    CHECK(x.kernel == y.kernel);
    CHECK(x.outputs == y.outputs);
    CHECK(x.attrs == y.attrs);
    REQUIRE(x.arity == y.arity);
    const auto xs = operands(a, v), ys = operands(b, w);
    for (std::uint32_t s = 0; s < x.arity; ++s) CHECK(value_name(a, xs[s]) == value_name(b, ys[s]));
  }
}

tensor_spec f32(std::int64_t n) { return {dtype::float32, {n, n}}; }

// x -> d0(cuda:0, two outputs) -> r(call) -> out; out also reads d0:1.
graph small_graph() {
  graph g;
  g[boost::graph_bundle].name = "small";
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(2)}});
  const vertex d0 = add_node(g, {.id = "d0",
                                 .op = op_kind::delegate,
                                 .device = cuda_device(0),
                                 .kernel = "add",
                                 .outputs = {f32(2), f32(2)},
                                 .attrs = R"({"k":[1,2]})"});
  const vertex r = add_node(g, {.id = "r", .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, d0, 0);
  connect(g, {x, 0}, d0, 1);
  connect(g, {d0, 0}, r, 0);
  connect(g, {r, 0}, out, 0);
  connect(g, {d0, 1}, out, 1);
  return g;
}

const char* const small_graph_json =
    "{\"format\":\"devpass.graph/1\",\"name\":\"small\",\"nodes\":[\n"
    "{\"id\":\"x\",\"op\":\"input\",\"outputs\":[{\"dtype\":\"float32\",\"shape\":[2,2]}]},\n"
    "{\"id\":\"d0\",\"op\":\"delegate\",\"device\":\"cuda:0\",\"kernel\":\"add\",\"inputs\":[\"x\",\"x\"],"
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[2,2]},{\"dtype\":\"float32\",\"shape\":[2,2]}],\"attrs\":{\"k\":[1,"
    "2]}},\n"
    "{\"id\":\"r\",\"op\":\"call\",\"kernel\":\"relu\",\"inputs\":[\"d0\"],\"outputs\":[{\"dtype\":\"float32\","
    "\"shape\":[2,2]}]},\n"
    "{\"id\":\"out\",\"op\":\"output\",\"inputs\":[\"r\",\"d0:1\"]}\n"
    "]}\n";

}  // namespace

TEST_CASE("writer: writes compact JSON, one node per line, in a fixed field order") {
  CHECK(to_json(small_graph()) == small_graph_json);
}

TEST_CASE("writer: the stream and string forms agree and are deterministic") {
  const graph g = small_graph();
  std::ostringstream os;
  write_graph(g, os);
  CHECK(os.str() == to_json(g));
  CHECK(to_json(g) == to_json(small_graph()));
}

TEST_CASE("writer: nodes come out in a topological order, not vertex order") {
  graph g;
  g[boost::graph_bundle].name = "rev";
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  const vertex c = add_node(g, {.id = "c", .op = op_kind::call, .kernel = "k", .outputs = {f32(1)}});
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(1)}});
  connect(g, {x, 0}, c, 0);
  connect(g, {c, 0}, out, 0);
  const std::string text = to_json(g);
  CHECK(text.find("\"id\":\"x\"") < text.find("\"id\":\"c\""));
  CHECK(text.find("\"id\":\"c\"") < text.find("\"id\":\"out\""));
  const graph back = read_graph_string(text);
  CHECK(back[0].id == "x");
  CHECK(back[2].id == "out");
  check_same_graph(g, back);
}

TEST_CASE("writer: a given order is followed and checked") {
  const graph g = small_graph();
  const std::vector<vertex> order{0, 1, 2, 3};
  CHECK(to_json(g, &order) == small_graph_json);
  const std::vector<vertex> missing{0, 1, 3};
  try {
    (void)to_json(g, &missing);
    FAIL("an incomplete order was accepted");
  } catch (const graph_error& e) {
    CHECK(e.node() == "r");
    CHECK(e.field() == "order");
    CHECK(e.problem() == "the node is missing from the write order");
  }
  const std::vector<vertex> twice{0, 1, 1, 2, 3};
  CHECK_THROWS_WITH_AS((void)to_json(g, &twice), "node 'd0': order: the node appears twice in the write order",
                       graph_error);
}

TEST_CASE("writer: skips erased nodes") {
  graph g = small_graph();
  const vertex extra = add_node(g, {.id = "dead", .op = op_kind::constant, .outputs = {f32(1)}});
  erase_node(g, extra);
  CHECK(to_json(g) == small_graph_json);
}

TEST_CASE("writer: tensor spec device, mem_id and offset are written when set") {
  graph g;
  const vertex x =
      add_node(g, {.id = "x",
                   .op = op_kind::input,
                   .outputs = {{dtype::int64, {3}, cuda_device(1), 2, 64}, {dtype::bool_, {}, cpu_device}}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 1}, out, 0);
  const std::string text = to_json(g);
  CHECK(text.find(R"({"dtype":"int64","shape":[3],"device":"cuda:1","mem_id":2,"offset":64})") != std::string::npos);
  CHECK(text.find(R"({"dtype":"bool","shape":[],"device":"cpu"})") != std::string::npos);
  check_same_graph(g, read_graph_string(text));
}

TEST_CASE("writer: a resident copy says so after its device, and only a resident one") {
  graph g;
  const vertex w = add_node(g, {.id = "w", .op = op_kind::constant, .outputs = {f32(2)}});
  const vertex load = add_node(g, {.id = "w@h2d[cuda:0]",
                                   .op = op_kind::h2d_copy,
                                   .device = cuda_device(0),
                                   .resident = true,
                                   .outputs = {f32(2)}});
  const vertex each =
      add_node(g, {.id = "w@h2d[cuda:1]", .op = op_kind::h2d_copy, .device = cuda_device(1), .outputs = {f32(2)}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {w, 0}, load, 0);
  connect(g, {w, 0}, each, 0);
  connect(g, {load, 0}, out, 0);
  connect(g, {each, 0}, out, 1);
  const std::string text = to_json(g);
  CHECK(text.find(R"({"id":"w@h2d[cuda:0]","op":"h2d_copy","device":"cuda:0","resident":true,"inputs":["w"],)") !=
        std::string::npos);
  CHECK(text.find(R"({"id":"w@h2d[cuda:1]","op":"h2d_copy","device":"cuda:1","inputs":["w"],)") != std::string::npos);
  const graph back = read_graph_string(text);
  check_same_graph(g, back);
  CHECK(to_json(back) == text);
}

TEST_CASE("writer: escapes strings so that they read back unchanged") {
  graph g;
  g[boost::graph_bundle].name = "q\"uote\\back\nline";
  const std::string odd = std::string("a\"b\\c/d\te\x01\x1f") + "\xc3\xa9";  // ends in U+00E9
  const vertex x = add_node(g, {.id = odd, .op = op_kind::input, .outputs = {f32(1), f32(1)}});
  const vertex c = add_node(g, {.id = "c", .op = op_kind::call, .kernel = "k\r\b\f", .outputs = {f32(1)}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 1}, c, 0);
  connect(g, {c, 0}, out, 0);
  const std::string text = to_json(g);
  CHECK(text.find(R"("id":"a\"b\\c/d\te\u0001\u001f)"
                  "\xc3\xa9\"") != std::string::npos);
  CHECK(text.find(R"("kernel":"k\r\b\f")") != std::string::npos);
  CHECK(text.find(R"("inputs":["a\"b\\c/d\te\u0001\u001f)"
                  "\xc3\xa9:1\"]") != std::string::npos);
  const graph back = read_graph_string(text);
  CHECK(method_name(back) == method_name(g));
  check_same_graph(g, back);
  CHECK(to_json(back) == text);
}

namespace {

// The escaping of the writer before it wrote runs and blocks (one byte at a time, into a
// std::string): the reference the faster code must match, byte for byte.
std::string reference_json_string(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += hex[u >> 4];
          out += hex[u & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

TEST_CASE("writer: every byte is escaped as the byte-at-a-time reference does, wherever it stands") {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const std::string plain(40, 'p');
    for (const std::string& text : {std::string(1, c), "ab" + std::string(1, c) + "cd", std::string(3, c) + "x",
                                    plain + c, c + plain, plain + c + plain + c}) {
      INFO("byte " << b << ", " << text.size() << " bytes");
      const std::string expected = reference_json_string(text);
      std::string appended = "<";
      detail::append_json_string(appended, text);
      CHECK(appended == "<" + expected);
      std::string written(detail::json_escaped_size_max(text.size()), '\0');
      written.resize(static_cast<std::size_t>(detail::write_json_string_body(written.data(), text) - written.data()));
      CHECK("\"" + written + "\"" == expected);
    }
  }
  std::string empty;
  detail::append_json_string(empty, std::string_view{});
  CHECK(empty == "\"\"");
}

TEST_CASE(
    "writer: ids with escapes, in ids, kernels and ':N' input references, are written as the reference escapes them") {
  graph g;
  g[boost::graph_bundle].name = std::string("m\x7f\n");
  std::string every_byte;  // 1..255: the reader would refuse some as UTF-8, the writer passes them through
  for (int b = 1; b < 256; ++b) every_byte += static_cast<char>(b);
  const vertex x = add_node(g, {.id = every_byte, .op = op_kind::input, .outputs = {f32(1), f32(1), f32(1)}});
  const vertex q = add_node(g, {.id = "\"", .op = op_kind::input, .outputs = {f32(1), f32(1)}});
  const vertex c =
      add_node(g, {.id = "\\", .op = op_kind::call, .kernel = every_byte, .outputs = {f32(1)}, .attrs = "{}"});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 2}, c, 0);
  connect(g, {q, 1}, c, 1);
  connect(g, {x, 0}, c, 2);
  connect(g, {c, 0}, out, 0);
  const std::string reference_id = reference_json_string(every_byte);
  const std::string with_output = reference_id.substr(0, reference_id.size() - 1) + ":2\"";
  const std::string text = to_json(g);
  CHECK(text.find("\"name\":" + reference_json_string(method_name(g)) + ",") != std::string::npos);
  CHECK(text.find("{\"id\":" + reference_id + ",\"op\":\"input\"") != std::string::npos);
  CHECK(text.find("{\"id\":\"\\\\\",\"op\":\"call\",\"kernel\":" + reference_id + ",\"inputs\":[" + with_output +
                  ",\"\\\":1\"," + reference_id + "]") != std::string::npos);
}

TEST_CASE("writer: the buffered formatter writes the same bytes whatever its block size") {
  // Fields of every kind, one of them larger than the small blocks (it grows the block for it).
  const auto format = [](std::size_t block) {
    std::ostringstream os;
    detail::write_buffer out(os, block);
    for (int i = 0; i < 200; ++i) {
      out.text("{\"k\":");
      out.integer(i * 1234567891011LL - 5);
      out.text(',');
      out.json_string("a\"b\\c\x01" + std::to_string(i));
      out.json_string_with_output("n\t" + std::to_string(i), static_cast<std::uint32_t>(i) * 40000u);
      out.device_name(i % 3 ? cuda_device(static_cast<std::uint16_t>(i * 300)) : cpu_device);
      out.text(i % 50 ? std::string_view("}") : std::string_view(std::string(3000, 'z')));
    }
    out.flush();
    return os.str();
  };
  const std::string whole = format(detail::write_buffer::default_block);
  CHECK(whole.size() > 20000);
  CHECK(whole.find("\"n\\t199:7960000\"cuda:59700") != std::string::npos);
  for (const std::size_t block : {1u, 7u, 64u, 4096u}) {
    INFO("block " << block);
    CHECK(format(block) == whole);
  }
}

TEST_CASE("writer: a cycle is reported, not written") {
  graph g;
  const vertex a = add_node(g, {.id = "a", .op = op_kind::call, .kernel = "k", .outputs = {f32(1)}});
  const vertex b = add_node(g, {.id = "b", .op = op_kind::call, .kernel = "k", .outputs = {f32(1)}});
  connect(g, {a, 0}, b, 0);
  connect(g, {b, 0}, a, 0);
  CHECK_THROWS_AS((void)to_json(g), graph_error);
}

TEST_CASE("writer: round-trips every sample graph byte for byte") {
  std::size_t files = 0;
  for (const char* dir : {"cases", "models"}) {
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::directory_iterator(devpass::testing_support::graph_path(dir)))
      if (entry.path().extension() == ".json") paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      INFO(path.string());
      const graph g = read_graph_file(path.string());
      const std::string once = to_json(g);
      const graph back = read_graph_string(once, path.string());
      check_same_graph(g, back);
      CHECK(to_json(back) == once);
      ++files;
    }
  }
  CHECK(files == 13);
}

TEST_CASE("writer: write_graph_file replaces the file only when writing succeeds") {
  const auto dir = std::filesystem::temp_directory_path() / ("devpass_writer_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "g.json").string();
  write_graph_file(small_graph(), path);
  CHECK(slurp(path) == small_graph_json);

  graph cyclic;
  const vertex a = add_node(cyclic, {.id = "a", .op = op_kind::call, .kernel = "k", .outputs = {f32(1)}});
  connect(cyclic, {a, 0}, a, 0);
  CHECK_THROWS_AS(write_graph_file(cyclic, path), graph_error);
  CHECK(slurp(path) == small_graph_json);

  // A writer that fails half way leaves the old file and no temporary behind.
  CHECK_THROWS_AS(write_file_atomically(path,
                                        [](std::ostream& os) {
                                          os << "partial";
                                          throw graph_error("", "", "", "stop");
                                        }),
                  graph_error);
  CHECK(slurp(path) == small_graph_json);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);

  CHECK_THROWS_AS(write_graph_file(small_graph(), (dir / "no_such_dir" / "g.json").string()), graph_error);
  std::filesystem::remove_all(dir);
}
