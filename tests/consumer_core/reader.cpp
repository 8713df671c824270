// Built against devpass::io in a tree configured without simdjson (tests/consumer_core): the
// writers compile, and the reader's header stops the build with devpass's message, which
// run_consumer.cmake expects (EXPECT_BUILD_ERROR).
#include <devpass/io/json_reader.hpp>
#include <devpass/io/json_writer.hpp>

int main() { return devpass::read_graph_string("{}", "-").m_vertices.empty() ? 0 : 1; }
