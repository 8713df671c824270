// tests/read_graph_declared.hpp — the devpass.graph/1 reader (io/json_reader.hpp) for the test
// programs that only load graphs: declared here, compiled once in tests/instances/read_graph.cpp.
// A TU that calls the reader in place compiles it and simdjson's parsers with it, about 1.4 CPU
// seconds at the g++ stage's -Og; a TU that calls these compiles a call (docs/building.md,
// "Compile times"). The tests of the reader itself, and of the writers against it, include
// json_reader.hpp. Behaviour and messages are the reader's: these only forward.
#pragma once

#include <string>
#include <string_view>

#include "devpass/graph/graph.hpp"

namespace devpass::testing_support {

[[nodiscard]] graph read_graph_file(const std::string& path);
[[nodiscard]] graph read_graph_string(std::string_view json, std::string_view file_label = "<string>");

}  // namespace devpass::testing_support
