// Fuzz target: the devpass.graph/1 reader. Any bytes are either rejected with a graph_error or
// read into a graph that passes verify_structure and survives write -> read -> write unchanged.
#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace devpass;
  const std::optional<graph> read = fuzz::read_or_reject(fuzz::as_text({data, size}));
  if (!read) return 0;
  const graph& g = *read;
  const verify_report report = verify_structure(g);
  fuzz::require(report.ok(), "a graph the reader accepts is structurally valid", report.to_string());
  const std::string once = fuzz::written(g);
  graph again;
  try {
    again = read_graph_string(once, "<written>");
  } catch (const graph_error& e) {
    fuzz::broken("the reader reads what the writer wrote", e.what());
  }
  fuzz::require(fuzz::written(again) == once, "write -> read -> write is byte-identical");
  return 0;
}
