// tests/read_graph_declared.hpp — the devpass.graph/1 reader (io/json_reader.hpp) for the test
// programs that only load graphs: declared here, compiled once in tests/instances/read_graph.cpp,
// so that those TUs do not each compile the reader and simdjson's parsers (docs/building.md,
// "Compile times"). The reader's own tests and the JSON writer's round trips include
// json_reader.hpp. Behaviour and messages are the reader's: these only forward.
#pragma once

#include <string>
#include <string_view>

#include "devpass/graph/graph.hpp"
#include "devpass/io/read_options.hpp"

namespace devpass::testing_support {

[[nodiscard]] graph read_graph_file(const std::string& path, read_options options = {});
[[nodiscard]] graph read_graph_string(std::string_view json, std::string_view file_label = "<string>",
                                      read_options options = {});

}  // namespace devpass::testing_support
