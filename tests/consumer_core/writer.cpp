// devpass::io without simdjson still has the writers (tests/consumer_core, add_subdirectory).
#include <devpass/io/json_writer.hpp>

#include <sstream>

int main() {
  devpass::graph g;
  std::ostringstream out;
  devpass::write_graph(g, out);
  return out.str().empty() ? 1 : 0;
}
