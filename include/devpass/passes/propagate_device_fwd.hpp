// devpass/passes/propagate_device_fwd.hpp — device propagation declared, not defined: for the
// TUs of a compiler that call the pass while one TU of its own compiles it.
//
// The pass is templates over the graph model and the policy, so every TU that includes
// propagate_device.hpp and calls it compiles the whole pass again: the rule tables, the driver,
// the verifier's input check (several times the graph model's own compile time: the figures are
// in docs/performance.md, "Compile time"). A compiler calls it from a few
// places; this header lets those TUs call it for the price of a declaration:
//
//   // in any number of TUs
//   #include <devpass/passes/propagate_device_fwd.hpp>
//   devpass::propagate_device(my_graph, options);
//
//   // in exactly one TU
//   #include <devpass/passes/propagate_device.hpp>
//   DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(my_compiler::ir_graph)
//
// Without that one TU the program does not link (an undefined reference to propagate_device
// for the graph type), never a silent difference. propagate_device.hpp includes this header, so
// the declarations and the definitions are the same ones.
#pragma once

#include "devpass/graph/graph.hpp"
#include "devpass/passes/propagate_options.hpp"
#include "devpass/pipeline/phase.hpp"
#include "devpass/rules/trace.hpp"

namespace devpass {

// Runs device propagation with a compile-time Policy and any instrumentation. Without options,
// the policy's own (options_for<Policy>()); options whose policy Policy compiled out are a
// config_error, not a run that copies nothing (check_options_agree).
template <class Policy = policy_from_options, class G = graph, class Instrumentation = pipeline::no_instrumentation>
propagate_stats propagate_device_with(G& g, const propagate_options& options = options_for<Policy>(),
                                      Instrumentation&& instrumentation = {});

// The same, reporting every rule the phases try at each node to `trace` (rules/trace.hpp; null:
// no reports), as devpass-opt --debug-rules does. A separate entry point because the rules'
// explanations are code: a TU that calls only propagate_device(_with) does not compile them.
template <class Policy = policy_from_options, class G = graph, class Instrumentation = pipeline::no_instrumentation>
propagate_stats propagate_device_traced(G& g, const propagate_options& options, const rules::rule_trace* trace,
                                        Instrumentation&& instrumentation = {});

// The entry point the tools use: the policy is chosen by options.policy. Any graph model.
template <class G>
propagate_stats propagate_device(G& g, const propagate_options& options = {});

}  // namespace devpass

// Compiles propagate_device(G&, const propagate_options&) for graph model G in this TU (which
// must include propagate_device.hpp), for the TUs that call it through this header. At namespace
// scope, once per program and graph model.
#define DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(G) \
  template ::devpass::propagate_stats devpass::propagate_device<G>(G&, const ::devpass::propagate_options&);
