// examples/compiler_ir/front_end.hpp — how the compiler's front end fills its IR (compiler_ir.hpp):
// one op at a time, each with one result, reading output 0 of its operands, as a tracer emits
// them; and the return. The graph builder (build_as<cir::graph>()) is the other way in, through
// the model's add_node.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "compiler_ir.hpp"

namespace cir {

// The front end's way to fill the IR: an op on a device with one result of this dtype and shape,
// reading output 0 of each operand in order. Returns its vertex.
inline vertex add_op(graph& g, opcode op, devpass::device on, std::string name, std::initializer_list<vertex> operands,
                     devpass::dtype type, std::initializer_list<std::int64_t> shape, std::uint32_t attr = 0) {
  module& m = g[boost::graph_bundle];
  std::uint64_t bytes = devpass::element_size(type);
  for (const std::int64_t d : shape) bytes *= static_cast<std::uint64_t>(d);
  const vertex v = boost::add_vertex(op_node{op, false, encode(on), 0, static_cast<std::uint32_t>(m.values.size()), 1,
                                             static_cast<std::uint32_t>(m.names.size()), attr},
                                     g);
  m.names.push_back(std::move(name));
  m.values.push_back({.bytes = bytes,
                      .type = type,
                      .rank = static_cast<std::uint8_t>(shape.size()),
                      .dims = static_cast<std::uint32_t>(m.shape_pool.size())});
  m.shape_pool.insert(m.shape_pool.end(), shape.begin(), shape.end());
  std::uint32_t slot = 0;
  for (const vertex operand : operands) devpass::connect(g, {operand, 0}, v, slot++);
  return v;
}

// The return: reads output 0 of each result in order.
inline vertex add_ret(graph& g, std::string name, std::initializer_list<vertex> results) {
  module& m = g[boost::graph_bundle];
  const vertex v = boost::add_vertex(op_node{opcode::ret, false, 0, 0, static_cast<std::uint32_t>(m.values.size()), 0,
                                             static_cast<std::uint32_t>(m.names.size())},
                                     g);
  m.names.push_back(std::move(name));
  std::uint32_t slot = 0;
  for (const vertex result : results) devpass::connect(g, {result, 0}, v, slot++);
  return v;
}

}  // namespace cir
