// devpass/passes/capabilities.hpp — what devpass's passes require of a graph and provide, for the
// pipeline's compile-time order check (pipeline/pipeline.hpp). The pipeline itself knows none of
// these: a capability is any type, and one with `given_by_input = true` holds before the first
// phase (the input graph has it).
#pragma once

namespace devpass::capabilities {

struct devices_assigned {  // every node has its device (the partitioner's job: the input)
  static constexpr bool given_by_input = true;
};
struct copies_explicit {};     // every cross-device read goes through a copy node
struct round_trips_elided {};  // no h2d_copy(d2h_copy(x)) with x on the h2d's device
struct memory_planned {};      // values carry mem_id and offset
struct kernel_dtypes_met {};   // every operand slot a cast signature names reads the dtype it wants

}  // namespace devpass::capabilities
