// The one TU of the test programs that compiles the devpass.graph/1 reader; the others call it
// through tests/read_graph_declared.hpp.
#include "read_graph_declared.hpp"

#include "devpass/io/json_reader.hpp"

namespace devpass::testing_support {

graph read_graph_file(const std::string& path, read_options options) { return devpass::read_graph_file(path, options); }

graph read_graph_string(std::string_view json, std::string_view file_label, read_options options) {
  return devpass::read_graph_string(json, file_label, options);
}

}  // namespace devpass::testing_support
