// devpass/passes/propagate_options.hpp — what device propagation is asked to do: the run-time
// options (propagate_options), the compile-time policies and their knobs (propagate_knobs), and
// what a run reports (propagate_stats). Kept apart from the pass (propagate_device.hpp) so that a
// TU can name them, and call the pass through propagate_device_fwd.hpp, without compiling it.
#pragma once

#include <concepts>
#include <optional>
#include <string>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/error.hpp"

namespace devpass {

enum class copy_policy { executorch, devpass };

// The run-time options. The names are ExecuTorch's where ExecuTorch has the option, so that a
// user of its PropagateDevicePass finds them: enable_non_cpu_memory_planning switches device
// propagation itself (copies, placement) on, not only planning, as in ExecuTorch (off: its legacy
// mode, delegate devices tagged and nothing else); `elide` is the run-time switch of the phase the
// compile-time knob elide_round_trips compiles in. `resident_constants` is devpass's own: under
// the devpass policy a constant lives on each device that reads it, its copy there made once, when
// the method is loaded (a resident copy), not on every execution; off, for device memory that cannot
// hold the weights, they are copied on every execution. The executorch policy copies
// them per execution either way (ExecuTorch's semantics).
struct propagate_options {
  copy_policy policy = copy_policy::devpass;
  bool enable_non_cpu_memory_planning = true;
  bool skip_h2d_for_method_inputs = false;
  bool skip_d2h_for_method_outputs = false;
  bool elide = true;
  bool resident_constants = true;
};

// A compile-time policy's knobs: which phases are compiled in. One struct, so a knob is named
// once, a misspelt knob is a compile error naming it (a designated initializer of a member that
// does not exist), and tools enumerate the knobs (policy_reflection.hpp, with Boost.Hana).
struct propagate_knobs {
  bool share_copies = true;       // the devpass copy sharing (else ExecuTorch's)
  bool elide_round_trips = true;  // false drops the elision phase at compile time
  bool runtime_selected = false;  // true: every phase compiled in, options choose
  // ExecuTorch's insert-input-copies, insert-output-copies and elide-round-trips planned as one
  // pass that makes only the copies elision would keep (fused_executorch_copies.hpp): the same
  // graph and the same (logical) counters. false: the three rule tables run literally.
  bool fuse_executorch_copies = true;
  // The devpass policy's insert-shared-copies as one sweep over the readers
  // (fused_shared_copies.hpp): the same graph and the same (logical) counters. false: the rule
  // table runs under the worklist driver.
  bool fuse_shared_copies = true;
  friend constexpr bool operator==(const propagate_knobs&, const propagate_knobs&) = default;
};

// A compile-time policy is a type with `static constexpr propagate_knobs knobs`, saying what
// differs from the defaults:
//   struct my_policy { static constexpr devpass::propagate_knobs knobs{.elide_round_trips = false}; };
// or, from a value, policy_of<propagate_knobs{...}>. A user's own phases may read more members of
// their policy type (their own knobs).
struct propagate_policy {
  static constexpr propagate_knobs knobs{};
};
struct executorch_propagate_policy {
  static constexpr propagate_knobs knobs{.share_copies = false};
};
// What the command line uses: the policy is an option (propagate_options::policy), and so is
// every phase's switch.
struct policy_from_options {
  static constexpr propagate_knobs knobs{.runtime_selected = true};
};
// Its name before: it read as the policy of runtime/.
using runtime_propagate_policy [[deprecated("devpass: runtime_propagate_policy is now policy_from_options")]] =
    policy_from_options;
template <propagate_knobs Knobs>
struct policy_of {
  static constexpr propagate_knobs knobs = Knobs;
};

// The knobs of policy type Policy, checked: a policy that sets a knob the old way, as a static
// member of its own, would have it silently ignored, so it does not compile.
template <class Policy>
consteval propagate_knobs knobs_of() {
  constexpr bool knobs_as_static_members = requires { Policy::share_copies; }
  || requires { Policy::elide_round_trips; }
  || requires { Policy::runtime_selected; }
  || requires { Policy::fuse_executorch_copies; }
  || requires { Policy::fuse_shared_copies; };
  static_assert(!knobs_as_static_members,
                "devpass: a policy sets its knobs in `static constexpr propagate_knobs knobs{...}`, not as static "
                "members (share_copies, elide_round_trips, runtime_selected, fuse_executorch_copies, "
                "fuse_shared_copies)");
  constexpr bool has_knobs = requires {
    { Policy::knobs } -> std::convertible_to<propagate_knobs>;
  };
  static_assert(has_knobs,
                "devpass: a propagation policy needs `static constexpr devpass::propagate_knobs knobs{...}`");
  if constexpr (has_knobs)
    return Policy::knobs;
  else
    return {};
}

// The copy policy whose phases Policy compiles in, or nullopt when it compiles both in and the
// options choose (runtime_selected).
template <class Policy>
consteval std::optional<copy_policy> compiled_copy_policy() {
  constexpr propagate_knobs knobs = knobs_of<Policy>();
  if (knobs.runtime_selected) return std::nullopt;
  return knobs.share_copies ? copy_policy::devpass : copy_policy::executorch;
}

// The default options for a run under Policy: its copy policy, everything else the defaults.
// propagate_device_with<Policy>(g) runs with these.
template <class Policy>
constexpr propagate_options options_for() {
  propagate_options options;
  if constexpr (constexpr auto compiled = compiled_copy_policy<Policy>()) options.policy = *compiled;
  return options;
}

namespace detail {
constexpr const char* copy_policy_name(copy_policy p) {
  return p == copy_policy::executorch ? "copy_policy::executorch" : "copy_policy::devpass";
}
[[noreturn, gnu::cold, gnu::noinline]] inline void refuse_policy_mismatch(copy_policy compiled, copy_policy asked) {
  throw config_error(std::string("the compile-time policy compiles in only the ") +
                     (compiled == copy_policy::executorch ? "executorch" : "devpass") +
                     " copy phases (its knobs.share_copies), but options.policy is " + copy_policy_name(asked) +
                     ": the run would copy nothing. Pass options with .policy = " + copy_policy_name(compiled) +
                     " (devpass::options_for<Policy>() gives them), or run with policy_from_options");
}
}  // namespace detail

// Throws config_error when the run-time options select phases Policy compiled out: a run that
// would silently do nothing (an executorch_propagate_policy run given the default options, whose
// policy is devpass).
template <class Policy>
void check_options_agree(const propagate_options& o) {
  if constexpr (constexpr auto compiled = compiled_copy_policy<Policy>())
    if (o.enable_non_cpu_memory_planning && o.policy != *compiled) detail::refuse_policy_mismatch(*compiled, o.policy);
}

// Throws config_error for option combinations that cannot work.
inline void validate(const propagate_options& o) {
  if (!o.enable_non_cpu_memory_planning && (o.skip_h2d_for_method_inputs || o.skip_d2h_for_method_outputs))
    throw config_error(
        "skip_h2d_for_method_inputs and skip_d2h_for_method_outputs need enable_non_cpu_memory_planning "
        "(without it no copies are inserted, so there is nothing to skip)");
}

struct propagate_stats {
  copy_census before, after;
};

}  // namespace devpass
