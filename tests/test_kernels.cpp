#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "devpass/runtime/kernels/attrs.hpp"
#include "devpass/runtime/kernels/builtin.hpp"

using namespace devpass;
using namespace devpass::runtime;

namespace {

// One host tensor for a kernel test: its spec and its bytes.
struct tensor {
  tensor_spec spec;
  std::vector<std::byte> bytes;
  template <class T>
  tensor(dtype t, std::vector<std::int64_t> shape, std::vector<T> values) : spec{.type = t, .shape = std::move(shape)} {
    bytes.resize(spec.byte_size());
    REQUIRE(values.size() * sizeof(T) == bytes.size());
    std::memcpy(bytes.data(), values.data(), bytes.size());
  }
  tensor(dtype t, std::vector<std::int64_t> shape)
      : spec{.type = t, .shape = std::move(shape)}, bytes(spec.byte_size()) {}
  template <class T>
  [[nodiscard]] std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

tensor f32(std::vector<std::int64_t> shape, std::vector<float> v) {
  return {dtype::float32, std::move(shape), std::move(v)};
}
tensor i64(std::vector<std::int64_t> shape, std::vector<std::int64_t> v) {
  return {dtype::int64, std::move(shape), std::move(v)};
}

const kernel_registry& registry() {
  static const kernel_registry r = [] {
    kernel_registry k;
    register_builtin_kernels(k);
    return k;
  }();
  return r;
}

// Looks the kernel up as the executor does (name + fits) and runs its host implementation.
// Returns false when no entry fits.
bool run(const std::string& kernel, std::vector<tensor*> inputs, std::vector<tensor*> outputs, std::string attrs = "") {
  node n{.id = "n", .op = op_kind::delegate, .device = cuda_device(0), .kernel = kernel, .attrs = std::move(attrs)};
  for (auto* o : outputs) n.outputs.push_back(o->spec);
  n.arity = static_cast<std::uint32_t>(inputs.size());
  std::vector<const tensor_spec*> specs;
  std::vector<tensor_view> in, out;
  for (auto* t : inputs) {
    specs.push_back(&t->spec);
    in.push_back({t->bytes.data(), &t->spec});
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) out.push_back({outputs[i]->bytes.data(), &n.outputs[i]});
  const kernel_entry* entry = registry().find(n, specs);
  if (entry == nullptr) return false;
  entry->host(kernel_call{n, in, out});
  for (std::size_t i = 0; i < outputs.size(); ++i) REQUIRE(outputs[i]->bytes.size() == n.outputs[i].byte_size());
  return true;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, double eps = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(eps));
  }
}

}  // namespace

TEST_CASE("attrs: reads top-level numbers and ignores nested and string values") {
  CHECK(kernels::attr_text(R"({"k":2,"eps":1e-06})", "k") == "2");
  CHECK(kernels::attr_text(R"({"k":2,"eps":1e-06})", "eps") == "1e-06");
  CHECK_FALSE(kernels::attr_text(R"({"inner":{"k":3}})", "k"));
  CHECK_FALSE(kernels::attr_text(R"({"name":"k","x":1})", "k"));
  CHECK(kernels::attr_text(R"({"s":"a\"b","k":7})", "k") == "7");
  CHECK_FALSE(kernels::attr_text("", "k"));
  const node n{.id = "route", .attrs = R"({"k":2,"theta":5e5,"bad":"two"})"};
  CHECK(kernels::attr_int(n, "k", 9) == 2);
  CHECK(kernels::attr_int(n, "missing", 9) == 9);
  CHECK(kernels::attr_float(n, "theta", 1.0) == 500000.0);
  try {
    (void)kernels::attr_int(n, "bad", 0);
    FAIL("expected a graph_error");
  } catch (const graph_error& e) {
    CHECK(e.node() == "route");
    CHECK(e.field() == "attrs.bad");
    CHECK(std::string(e.what()) == "node 'route': attrs.bad: expected an integer, got '\"two\"'");
  }
}

TEST_CASE("registry: registers every builtin kernel by name") {
  for (const char* name : {"add", "mul", "silu", "gelu", "matmul", "rms_norm", "softmax", "rotary", "attention",
                           "embedding", "top_k_routing", "moe_experts", "argmax", "arange"})
    CHECK_MESSAGE(registry().contains(name), name);
  CHECK_FALSE(registry().contains("relu"));
}

TEST_CASE("add and mul: elementwise on equal shapes; broadcasting does not fit") {
  auto a = f32({2, 2}, {1, 2, 3, 4});
  auto b = f32({2, 2}, {10, 20, 30, 40});
  tensor out(dtype::float32, {2, 2});
  REQUIRE(run("add", {&a, &b}, {&out}));
  CHECK(out.values<float>() == std::vector<float>{11, 22, 33, 44});
  REQUIRE(run("mul", {&a, &b}, {&out}));
  CHECK(out.values<float>() == std::vector<float>{10, 40, 90, 160});
  auto row = f32({2}, {1, 2});
  CHECK_FALSE(run("add", {&a, &row}, {&out}));
  auto ints = i64({2, 2}, {1, 2, 3, 4});
  CHECK_FALSE(run("add", {&a, &ints}, {&out}));
}

TEST_CASE("silu and gelu: match their closed forms") {
  auto x = f32({3}, {0.0f, 1.0f, -2.0f});
  tensor out(dtype::float32, {3});
  REQUIRE(run("silu", {&x}, {&out}));
  check_close(out.values<float>(), {0.0f, 0.7310585786f, -0.2384058440f});
  REQUIRE(run("gelu", {&x}, {&out}));
  check_close(out.values<float>(), {0.0f, 0.8413447461f, -0.0455002639f});
}

TEST_CASE("matmul: [m,k]x[k,n] and batched; mismatched inner dimensions do not fit") {
  auto a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  tensor out(dtype::float32, {2, 2});
  REQUIRE(run("matmul", {&a, &b}, {&out}));
  CHECK(out.values<float>() == std::vector<float>{58, 64, 139, 154});

  auto ba = f32({2, 1, 2}, {1, 2, 3, 4});
  auto bb = f32({2, 2, 1}, {5, 6, 7, 8});
  tensor bout(dtype::float32, {2, 1, 1});
  REQUIRE(run("matmul", {&ba, &bb}, {&bout}));
  CHECK(bout.values<float>() == std::vector<float>{17, 53});

  CHECK_FALSE(run("matmul", {&a, &a}, {&out}));
  tensor wrong(dtype::float32, {2, 3});
  CHECK_FALSE(run("matmul", {&a, &b}, {&wrong}));
}

TEST_CASE("rms_norm: scales each row by its root mean square and the weight") {
  auto x = f32({2, 2}, {3, 4, 1, 1});
  auto w = f32({2}, {1, 2});
  tensor out(dtype::float32, {2, 2});
  REQUIRE(run("rms_norm", {&x, &w}, {&out}, R"({"eps":0})"));
  // rms(3,4) = sqrt(12.5); rms(1,1) = 1
  check_close(out.values<float>(), {3 / 3.5355339f, 8 / 3.5355339f, 1, 2});
  auto bad_w = f32({3}, {1, 1, 1});
  CHECK_FALSE(run("rms_norm", {&x, &bad_w}, {&out}));
}

TEST_CASE("softmax: rows sum to one, stable for large inputs") {
  auto x = f32({2, 2}, {0, 0, 1000, 1000 + 0.6931471806f});
  tensor out(dtype::float32, {2, 2});
  REQUIRE(run("softmax", {&x}, {&out}));
  check_close(out.values<float>(), {0.5f, 0.5f, 1.0f / 3, 2.0f / 3}, 1e-4);
}

TEST_CASE("rotary: rotates each head's halves by position * theta^(-2i/h)") {
  // Two heads of size 2 at position 1 with theta irrelevant for i = 0 (angle = pos).
  auto x = f32({2, 4}, {1, 0, 0, 1, 1, 2, 3, 4});
  auto pos = i64({2}, {1, 0});
  tensor out(dtype::float32, {2, 4});
  REQUIRE(run("rotary", {&x, &pos}, {&out}, R"({"head_dim":2})"));
  const float c = std::cos(1.0f), s = std::sin(1.0f);
  check_close(out.values<float>(), {c, s, -s, c, 1, 2, 3, 4});
  CHECK_FALSE(run("rotary", {&x, &pos}, {&out}, R"({"head_dim":3})"));
}

TEST_CASE("attention: writes the cache and attends causally; positions outside the cache throw") {
  // One head of width 2, cache of 3 rows. Row 0 already holds key (1,0) and value (2,4).
  auto cache = f32({2, 3, 2}, {1, 0, 9, 9, 9, 9, /*values*/ 2, 4, 9, 9, 9, 9});
  auto q = f32({1, 2}, {0, 0});  // zero query: uniform weights over rows 0..1
  auto k = f32({1, 2}, {0, 1});
  auto v = f32({1, 2}, {6, 8});
  auto pos = i64({1}, {1});
  tensor out(dtype::float32, {1, 2}), cache_out(dtype::float32, {2, 3, 2});
  REQUIRE(run("attention", {&q, &k, &v, &cache, &pos}, {&out, &cache_out}));
  CHECK(cache_out.values<float>() == std::vector<float>{1, 0, 0, 1, 9, 9, 2, 4, 6, 8, 9, 9});
  check_close(out.values<float>(), {4, 6});

  // Prefill of two tokens at 0 and 1: token 0 sees only itself.
  auto q2 = f32({2, 2}, {0, 0, 0, 0});
  auto k2 = f32({2, 2}, {1, 0, 0, 1});
  auto v2 = f32({2, 2}, {2, 4, 6, 8});
  auto pos2 = i64({2}, {0, 1});
  tensor out2(dtype::float32, {2, 2});
  REQUIRE(run("attention", {&q2, &k2, &v2, &cache, &pos2}, {&out2, &cache_out}));
  check_close(out2.values<float>(), {2, 4, 4, 6});

  // A non-zero query: scores q.k / sqrt(2) = (1/sqrt2, 0) -> weights e^a/(e^a+1).
  auto q3 = f32({1, 2}, {1, 0});
  REQUIRE(run("attention", {&q3, &k, &v, &cache, &pos}, {&out, &cache_out}));
  const float w0 = std::exp(0.70710678f) / (std::exp(0.70710678f) + 1);
  check_close(out.values<float>(), {2 * w0 + 6 * (1 - w0), 4 * w0 + 8 * (1 - w0)});

  auto far = i64({1}, {3});
  try {
    run("attention", {&q, &k, &v, &cache, &far}, {&out, &cache_out});
    FAIL("expected a graph_error");
  } catch (const graph_error& e) {
    CHECK(std::string(e.what()) == "node 'n': inputs[4]: position 3 is outside the cache's 3 rows");
  }
}

TEST_CASE("embedding: gathers rows by id; an id outside the table throws") {
  auto table = f32({3, 2}, {0, 1, 10, 11, 20, 21});
  auto ids = i64({3}, {2, 0, 2});
  tensor out(dtype::float32, {3, 2});
  REQUIRE(run("embedding", {&table, &ids}, {&out}));
  CHECK(out.values<float>() == std::vector<float>{20, 21, 0, 1, 20, 21});
  auto bad = i64({3}, {0, 3, 1});
  CHECK_THROWS_WITH_AS(run("embedding", {&table, &bad}, {&out}),
                       "node 'n': inputs[1]: id 3 is outside the table's 3 rows", graph_error);
}

TEST_CASE("top_k_routing: the k largest logits, ties to the lower id, softmax weights") {
  auto logits = f32({2, 4}, {0.5f, 2.0f, 1.0f, 2.0f, 3.0f, 0.0f, 0.0f, 3.0f - 0.6931471806f});
  tensor ids(dtype::int64, {2, 2}), weights(dtype::float32, {2, 2});
  REQUIRE(run("top_k_routing", {&logits}, {&ids, &weights}, R"({"k":2})"));
  CHECK(ids.values<std::int64_t>() == std::vector<std::int64_t>{1, 3, 0, 3});
  check_close(weights.values<float>(), {0.5f, 0.5f, 2.0f / 3, 1.0f / 3}, 1e-4);
  CHECK_FALSE(run("top_k_routing", {&logits}, {&ids, &weights}, R"({"k":3})"));
}

TEST_CASE("moe_experts: weighted sum of the selected SwiGLU experts") {
  // d = 1, hidden = 1, two experts: expert e computes silu(x * g_e) * (x * u_e) * d_e.
  auto x = f32({1, 1}, {2});
  auto ids = i64({1, 2}, {1, 0});
  auto weights = f32({1, 2}, {0.75f, 0.25f});
  auto w_gate = f32({2, 1, 1}, {1, 0.5f});
  auto w_up = f32({2, 1, 1}, {1, 3});
  auto w_down = f32({2, 1, 1}, {1, 2});
  tensor out(dtype::float32, {1, 1});
  REQUIRE(run("moe_experts", {&x, &ids, &weights, &w_gate, &w_up, &w_down}, {&out}));
  const auto silu = [](float v) { return v / (1 + std::exp(-v)); };
  const float expert1 = silu(1.0f) * 6 * 2, expert0 = silu(2.0f) * 2 * 1;
  check_close(out.values<float>(), {0.75f * expert1 + 0.25f * expert0});
  auto bad = i64({1, 2}, {1, 2});
  CHECK_THROWS_WITH_AS(run("moe_experts", {&x, &bad, &weights, &w_gate, &w_up, &w_down}, {&out}),
                       "node 'n': inputs[1]: expert id 2 is outside [0, 2)", graph_error);
}

TEST_CASE("argmax: per row, the lowest index on ties") {
  auto x = f32({2, 3}, {1, 5, 5, -1, -3, -2});
  tensor out(dtype::int64, {2});
  REQUIRE(run("argmax", {&x}, {&out}));
  CHECK(out.values<std::int64_t>() == std::vector<std::int64_t>{1, 0});
}

TEST_CASE("arange: positions from a start position") {
  auto start = i64({1}, {5});
  tensor out(dtype::int64, {3});
  REQUIRE(run("arange", {&start}, {&out}));
  CHECK(out.values<std::int64_t>() == std::vector<std::int64_t>{5, 6, 7});
  auto two = i64({2}, {5, 6});
  CHECK_FALSE(run("arange", {&two}, {&out}));
}

TEST_CASE("host kernels: the same inputs give the same bytes") {
  std::vector<float> a(64 * 48), b(48 * 32);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<float>(i));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(static_cast<float>(i));
  auto ta = f32({64, 48}, a);
  auto tb = f32({48, 32}, b);
  tensor first(dtype::float32, {64, 32}), second(dtype::float32, {64, 32});
  REQUIRE(run("matmul", {&ta, &tb}, {&first}));
  REQUIRE(run("matmul", {&ta, &tb}, {&second}));
  CHECK(first.bytes == second.bytes);
}
