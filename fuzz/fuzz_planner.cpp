// Fuzz target: the memory planner alone, on any graph the reader accepts (placed or not): it
// either refuses with a graph_error or returns a plan whose live values never share a byte.
#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace devpass;
  const std::optional<graph> g = fuzz::read_or_reject(fuzz::as_text({data, size}));
  if (!g) return 0;
  for (const plan_options& options : {plan_options{}, plan_options{.host_alignment = 64,
                                                      .device_alignment = 128,
                                                      .plan_device_method_inputs = true,
                                                      .plan_device_method_outputs = true}}) {
    graph planned = *g;
    try {
      fuzz::check_plan(planned, plan_memory(planned, options));
    } catch (const graph_error&) {}
  }
  return 0;
}
