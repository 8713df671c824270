// devpass._devpass: devpass's device propagation and memory placement for Python, over arrays
// (numpy, no JSON). The graph goes in as interop::graph_arrays and comes back as
// interop::propagation_arrays (include/devpass/interop/array_graph.hpp says what each array
// means); devpass/executorch.py turns an FX graph into these arrays and the result back into FX
// nodes. Lifetimes and sizes go in as interop::interval_arrays and come back as offsets
// (interop/array_plan.hpp); devpass/_memory_planning.py makes them from ExecuTorch's TensorSpecs.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "devpass/interop/array_graph.hpp"
#include "devpass/interop/array_plan.hpp"

namespace nb = nanobind;
using namespace devpass;

template <class T>
using input_array = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

namespace {

template <class T>
std::span<const T> span_of(const input_array<T>& a) {
  return {a.data(), a.shape(0)};
}

// Hands a vector to numpy without copying: the array owns it through a capsule.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, owner);
}

nb::dict census(const copy_census& c) {
  nb::dict d;
  d["h2d"] = c.h2d;
  d["d2h"] = c.d2h;
  d["d2d"] = c.d2d;
  // Resident copies (made once, at load): none through the arrays, which carry no such mark, so
  // the bridge's weights stay where ExecuTorch puts them; the key says so rather than leave it out.
  d["resident"] = c.resident;
  return d;
}

copy_policy policy_named(const std::string& name) {
  if (name == "devpass") return copy_policy::devpass;
  if (name == "executorch") return copy_policy::executorch;
  throw nb::value_error(("policy: '" + name + "' is not a policy (devpass, executorch)").c_str());
}

nb::dict propagate(input_array<std::uint8_t> roles, input_array<std::int32_t> devices,
                   input_array<std::uint32_t> output_counts, input_array<std::uint32_t> operand_offsets,
                   input_array<std::uint32_t> operand_nodes, input_array<std::uint32_t> operand_outputs,
                   input_array<std::int32_t> value_marks, const std::vector<std::string>& names,
                   const std::string& policy, bool enable_non_cpu_memory_planning, bool skip_h2d_for_method_inputs,
                   bool skip_d2h_for_method_outputs, bool elide) {
  const interop::graph_arrays arrays{span_of(roles),
                                     span_of(devices),
                                     span_of(output_counts),
                                     span_of(operand_offsets),
                                     span_of(operand_nodes),
                                     span_of(operand_outputs),
                                     names,
                                     span_of(value_marks)};
  const propagate_options options{.policy = policy_named(policy),
                                  .enable_non_cpu_memory_planning = enable_non_cpu_memory_planning,
                                  .skip_h2d_for_method_inputs = skip_h2d_for_method_inputs,
                                  .skip_d2h_for_method_outputs = skip_d2h_for_method_outputs,
                                  .elide = elide};
  interop::propagation_arrays r;
  {
    nb::gil_scoped_release unlocked;  // the arrays are read-only and stay alive for the call
    r = interop::propagate_arrays(arrays, options);
  }
  nb::dict out;
  out["copy_roles"] = to_numpy(std::move(r.copy_roles));
  out["copy_devices"] = to_numpy(std::move(r.copy_devices));
  out["copy_source_nodes"] = to_numpy(std::move(r.copy_source_nodes));
  out["copy_source_outputs"] = to_numpy(std::move(r.copy_source_outputs));
  out["rewired_nodes"] = to_numpy(std::move(r.rewired_nodes));
  out["rewired_slots"] = to_numpy(std::move(r.rewired_slots));
  out["rewired_to_nodes"] = to_numpy(std::move(r.rewired_to_nodes));
  out["rewired_to_outputs"] = to_numpy(std::move(r.rewired_to_outputs));
  out["value_marks"] = to_numpy(std::move(r.value_marks));
  out["node_devices"] = to_numpy(std::move(r.node_devices));
  out["erased_nodes"] = to_numpy(std::move(r.erased_nodes));
  out["before"] = census(r.before);
  out["after"] = census(r.after);
  out["copies_removed"] = r.copies_removed;
  return out;
}

nb::dict place_intervals(input_array<std::uint32_t> first, input_array<std::uint32_t> last,
                         input_array<std::uint64_t> size, input_array<std::uint32_t> arena, std::uint32_t arena_count,
                         std::uint32_t alignment) {
  const interop::interval_arrays values{span_of(first), span_of(last), span_of(size), span_of(arena), arena_count};
  interop::placement_arrays r;
  {
    nb::gil_scoped_release unlocked;  // the arrays are read-only and stay alive for the call
    r = interop::place_intervals(values, alignment);
  }
  nb::dict out;
  out["offsets"] = to_numpy(std::move(r.offsets));
  out["arena_sizes"] = to_numpy(std::move(r.arena_sizes));
  out["lower_bounds"] = to_numpy(std::move(r.lower_bounds));
  return out;
}

}  // namespace

NB_MODULE(_devpass, m) {
  m.doc() =
      "devpass's device propagation and memory placement over arrays (include/devpass/interop/array_graph.hpp, "
      "array_plan.hpp)";
  // Errors that name a node and field; config errors are option combinations that cannot work.
  nb::exception<graph_error>(m, "GraphError", PyExc_ValueError);
  nb::exception<config_error>(m, "ConfigError", PyExc_ValueError);
  nb::list roles;
  for (int k = 0; k <= static_cast<int>(op_kind::output); ++k)
    roles.append(std::string(to_string(static_cast<op_kind>(k))));
  m.attr("ROLES") = roles;  // role code k is ROLES[k]
  m.attr("HOST") = interop::host_code;
  m.attr("UNMARKED") = interop::unmarked;
  m.def("propagate", &propagate, nb::arg("roles"), nb::arg("devices"), nb::arg("output_counts"),
        nb::arg("operand_offsets"), nb::arg("operand_nodes"), nb::arg("operand_outputs"), nb::arg("value_marks"),
        nb::arg("names"), nb::arg("policy"), nb::arg("enable_non_cpu_memory_planning"),
        nb::arg("skip_h2d_for_method_inputs"), nb::arg("skip_d2h_for_method_outputs"), nb::arg("elide") = true,
        "Propagates devices over a method given as arrays; returns the copies to make and the operands to rewire.");
  m.def(
      "place_intervals", &place_intervals, nb::arg("first"), nb::arg("last"), nb::arg("size"), nb::arg("arena"),
      nb::arg("arena_count"), nb::arg("alignment"),
      "Places values given by closed lifetimes [first, last] and sizes into arenas (memory_planner.hpp's placement); "
      "returns offsets per value, and arena_sizes and lower_bounds per arena. Raises ValueError on malformed arrays.");
}
