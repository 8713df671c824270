// The node's storage (graph.hpp, tensor_spec.hpp, shared_text.hpp): inline outputs and shapes,
// shared kernel and attrs texts, and the reader giving equal texts one block.
#include <doctest/doctest.h>

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_string;

TEST_CASE("shared_text: an empty text holds no block; a copy shares its block") {
  const shared_text none;
  CHECK(none.empty());
  CHECK(none.size() == 0);
  CHECK(none.view().empty());
  CHECK(shared_text("").empty());  // an empty string makes no block either
  CHECK(none == shared_text(std::string()));

  const shared_text add = "aten::add";
  const shared_text copy = add;  // NOLINT: the copy is what is tested
  CHECK(copy.shares_block_with(add));
  CHECK(copy == "aten::add");
  CHECK(copy.view() == "aten::add");
  CHECK(copy.str() == std::string("aten::add"));
  CHECK(copy.size() == 9);
  CHECK(copy[6] == 'a');
  CHECK(copy.starts_with("aten::"));
  CHECK(copy.ends_with("add"));
  CHECK(copy + "_out" == "aten::add_out");
  CHECK("fused:" + copy == "fused:aten::add");

  const shared_text other = std::string("aten::add");  // same text, its own block
  CHECK_FALSE(other.shares_block_with(add));
  CHECK(other == add);
  CHECK(shared_text("a") < shared_text("b"));
  CHECK(shared_text("b") != shared_text("a"));
}

TEST_CASE("shared_text: assignment and clear drop one reference, never the others'") {
  shared_text a = "relu";
  shared_text b = a;
  shared_text c = b;
  b.clear();
  CHECK(b.empty());
  CHECK(a == "relu");
  a = "gelu";  // a new block; c still holds the old one
  CHECK(c == "relu");
  CHECK(a == "gelu");
  c = a;
  CHECK(c.shares_block_with(a));
  c = std::move(a);
  CHECK(c == "gelu");
  shared_text& self = c;
  c = self;  // self-assignment keeps the text
  CHECK(c == "gelu");
}

TEST_CASE("shared_text_pool: equal texts get one block, up to its capacity") {
  shared_text_pool pool(2);
  const shared_text a1 = pool.get("a"), a2 = pool.get(std::string("a"));
  CHECK(a1.shares_block_with(a2));
  CHECK(pool.get("").empty());
  const shared_text b1 = pool.get("b"), b2 = pool.get("b");
  CHECK(b1.shares_block_with(b2));
  // Full: a third text is made but not remembered, so each request makes a block of its own.
  const shared_text c1 = pool.get("c"), c2 = pool.get("c");
  CHECK(c1 == c2);
  CHECK_FALSE(c1.shares_block_with(c2));
  CHECK(pool.get("a").shares_block_with(a1));  // what it remembers stays shared
}

TEST_CASE("tensor_shape: four dimensions inline, more on the heap, and it converts from a vector") {
  tensor_shape small = {2, 3, 4, 5};
  const std::int64_t* inline_storage = small.data();
  CHECK(small.capacity() == 4);
  small.push_back(6);  // a fifth dimension moves the shape to the heap
  CHECK(small.data() != inline_storage);
  CHECK(small == std::vector<std::int64_t>{2, 3, 4, 5, 6});

  const std::vector<std::int64_t> dims{7, 8};
  const tensor_shape from_vector = dims;
  CHECK(from_vector == tensor_shape{7, 8});
  CHECK(from_vector.to_vector() == dims);
  CHECK(checked_byte_size(dtype::float32, from_vector) == 7 * 8 * 4);

  tensor_shape copied = small;  // a heap shape copies to a block of its own
  CHECK(copied == small);
  CHECK(copied.data() != small.data());
  const std::int64_t* heap_storage = small.data();
  tensor_shape moved = std::move(small);  // and moves by taking the block
  CHECK(moved.data() == heap_storage);
  CHECK(moved.size() == 5);
  CHECK(small.empty());  // NOLINT: moved-from is empty, by contract
  small = moved;
  CHECK(small == moved);
  tensor_shape two = {1, 2};
  tensor_shape inline_moved = std::move(two);
  CHECK(inline_moved == tensor_shape{1, 2});
  inline_moved.resize(3, 9);
  CHECK(inline_moved == std::vector<std::int64_t>{1, 2, 9});
  CHECK(inline_moved.at(2) == 9);
  CHECK_THROWS_AS((void)inline_moved.at(3), std::out_of_range);
  inline_moved.assign(dims.begin(), dims.end());
  CHECK(inline_moved == dims);
  CHECK(tensor_shape{1, 2} < tensor_shape{1, 3});
  CHECK(tensor_shape(3, 1) == tensor_shape{1, 1, 1});
  const std::span<const std::int64_t> view = moved;
  CHECK(view.size() == 5);
  CHECK(sizeof(tensor_shape) == 40);

  tensor_spec spec{dtype::int64, dims};
  CHECK(spec.byte_size() == 7 * 8 * 8);
  CHECK(spec.same_layout(tensor_spec{dtype::int64, {7, 8}}));
  CHECK_FALSE(spec.same_layout(tensor_spec{dtype::int64, {7, 8, 1}}));
}

TEST_CASE("node_outputs: one spec inline, and a vector of specs converts") {
  const std::vector<tensor_spec> specs{{dtype::float32, {2}}, {dtype::int64, {3}}};
  node n{.id = "x", .op = op_kind::input, .outputs = specs};
  CHECK(n.outputs.size() == 2);
  CHECK(n.outputs == specs);
  CHECK(n.outputs[1].type == dtype::int64);
  node one{.id = "y", .op = op_kind::input, .outputs = {tensor_spec{dtype::float32, {4}}}};
  CHECK(one.outputs.capacity() == 1);
  CHECK(one.outputs.front().shape == tensor_shape{4});
  const tensor_spec* inline_storage = one.outputs.data();
  one.outputs.push_back(one.outputs.front());  // a second spec, copied from the first, moves to the heap
  CHECK(one.outputs.data() != inline_storage);
  CHECK(one.outputs.size() == 2);
  CHECK(one.outputs[1] == one.outputs[0]);
  node_outputs moved = std::move(one.outputs);  // a heap vector moves its block
  CHECK(moved.size() == 2);
  CHECK(one.outputs.empty());  // NOLINT: moved-from is empty, by contract
  node_outputs single = {tensor_spec{dtype::int64, {1, 2, 3, 4, 5}}};
  node_outputs single_moved = std::move(single);  // an inline spec moves into the new one's storage
  CHECK(single_moved.size() == 1);
  CHECK(single_moved[0].shape.size() == 5);
  CHECK(single.empty());  // NOLINT: moved-from
  moved = single_moved;   // assigning frees the heap block (ASan checks the lifetimes)
  CHECK(moved == single_moved);
  moved.resize(3);
  CHECK(moved.size() == 3);
  CHECK(moved[2] == tensor_spec{});
  moved.pop_back();
  CHECK(moved.size() == 2);
  CHECK_THROWS_AS((void)moved.at(2), std::out_of_range);
  moved.clear();
  CHECK(moved.empty());
  CHECK(sizeof(node_outputs) == 72);
}

TEST_CASE("the reader gives the nodes that name one kernel (or one attrs object) one block") {
  const graph g = read_graph_string(R"({"format":"devpass.graph/1","name":"m","nodes":[
    {"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2]}]},
    {"id":"a","op":"delegate","device":"cuda:0","kernel":"aten::relu","inputs":["x"],
     "outputs":[{"dtype":"float32","shape":[2]}],"attrs":{"alpha":1}},
    {"id":"b","op":"delegate","device":"cuda:0","kernel":"aten::relu","inputs":["a"],
     "outputs":[{"dtype":"float32","shape":[2]}],"attrs":{"alpha": 1}},
    {"id":"c","op":"call","kernel":"aten::gelu","inputs":["b"],"outputs":[{"dtype":"float32","shape":[2]}]},
    {"id":"out","op":"output","inputs":["c"]}]})");
  REQUIRE(boost::num_vertices(g) == 5);
  CHECK(g[1].kernel == "aten::relu");
  CHECK(g[1].kernel.shares_block_with(g[2].kernel));
  CHECK_FALSE(g[3].kernel.shares_block_with(g[1].kernel));
  CHECK(g[1].attrs == R"({"alpha":1})");  // minified, so both spellings are one text
  CHECK(g[1].attrs.shares_block_with(g[2].attrs));
  CHECK(g[0].kernel.empty());
  CHECK(g[0].attrs.empty());

  graph copy = g;  // a graph's copy shares the texts too
  CHECK(copy[1].kernel.shares_block_with(g[1].kernel));
  copy[1].kernel = "aten::sigmoid";  // and changing one leaves the original as it was
  CHECK(g[1].kernel == "aten::relu");
  CHECK(g[2].kernel == "aten::relu");
}
