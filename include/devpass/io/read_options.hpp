// devpass/io/read_options.hpp — how read_graph_file and read_graph_string build the graph they
// read: the choices that change its memory, never what it holds. Apart from json_reader.hpp so
// that code passing options need not compile the reader.
#pragma once

#include "devpass/graph/reserve.hpp"

namespace devpass {

struct read_options {
  // How the graph's vertex and edge storage, and the room reserved in it for the copies passes
  // add, is backed (graph/reserve.hpp; devpass-opt --huge-pages).
  page_advice pages = page_advice::system_default;
};

}  // namespace devpass
