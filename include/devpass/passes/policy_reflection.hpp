// devpass/passes/policy_reflection.hpp — the knobs of device propagation, enumerable at compile
// time (Boost.Hana's BOOST_HANA_ADAPT_STRUCT): a compile-time policy's `propagate_knobs` and the
// run-time `propagate_options`. Drivers derive their command-line options, the options' --help
// lines and --print-policy's JSON (io/policy_json.hpp) from these, so a knob added to either struct appears everywhere
// at once, and one without a help line does not compile.
//
// Kept out of propagate_device.hpp: a pass over a compiler's graph does not pay for Hana
// (docs/pipelines.md, "Where Hana earns its place", has the compile-time cost).
#pragma once

#include <array>
#include <boost/hana/accessors.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/string.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "devpass/passes/propagate_device.hpp"

BOOST_HANA_ADAPT_STRUCT(devpass::propagate_knobs, share_copies, elide_round_trips, runtime_selected,
                        fuse_executorch_copies, fuse_shared_copies);
// The run-time knobs, in the order the command line lists them.
BOOST_HANA_ADAPT_STRUCT(devpass::propagate_options, policy, skip_h2d_for_method_inputs, skip_d2h_for_method_outputs,
                        enable_non_cpu_memory_planning, elide, resident_constants);

namespace devpass::reflection {

// What each knob means, for --help: written once, beside the knobs it describes.
struct knob_help {
  std::string_view knob;
  std::string_view help;
};
inline constexpr knob_help propagate_option_help[] = {
    {"policy", "copy policy: ExecuTorch's exact semantics, or devpass's shared copies (default)"},
    {"skip_h2d_for_method_inputs", "method inputs feeding a device delegate are handed in on its device (no h2d)"},
    {"skip_d2h_for_method_outputs", "method outputs stay on their device (no d2h)"},
    {"enable_non_cpu_memory_planning", "ExecuTorch's legacy mode: no copies, device tags only"},
    {"elide", "keep h2d_copy(d2h_copy(x)) round trips"},
    {"resident_constants", "devpass policy: copy constants on every execution, not once to each device at load"},
};
inline constexpr knob_help propagate_knob_help[] = {
    {"share_copies", "the devpass copy sharing (one copy per value and device); false: ExecuTorch's copies"},
    {"elide_round_trips", "compile the round-trip elision phase in"},
    {"runtime_selected", "compile every phase in and let the run-time options choose"},
    {"fuse_executorch_copies",
     "ExecuTorch's insert and elide phases as one planned pass (the same graph; false: literal)"},
    {"fuse_shared_copies", "the devpass policy's copy insertion as one sweep (the same graph; false: literal)"},
};

template <std::size_t N>
constexpr std::string_view help_of(const knob_help (&table)[N], std::string_view knob) {
  for (const auto& entry : table)
    if (entry.knob == knob) return entry.help;
  return {};
}

// f(name, value) for every knob of a reflected struct, in its adapted order.
template <class Struct, class F>
void for_each_knob(const Struct& knobs, F&& f) {
  boost::hana::for_each(boost::hana::accessors<Struct>(), [&](auto pair) {
    f(std::string_view(boost::hana::to<const char*>(boost::hana::first(pair))), boost::hana::second(pair)(knobs));
  });
}

// The names of a copy policy, on the command line and in JSON.
inline constexpr std::array<std::pair<copy_policy, std::string_view>, 2> copy_policy_names{
    {{copy_policy::executorch, "executorch"}, {copy_policy::devpass, "devpass"}}};
constexpr std::string_view to_string(copy_policy p) {
  for (const auto& [value, name] : copy_policy_names)
    if (value == p) return name;
  return {};
}

// A knob's command-line flag: "skip_h2d_for_method_inputs" -> "--skip-h2d-for-method-inputs"
// when it is off by default (the flag turns it on); "elide" -> "--no-elide" and
// "enable_non_cpu_memory_planning" -> "--no-non-cpu-memory-planning" when it is on by default.
inline std::string flag_of(std::string_view knob, bool on_by_default) {
  std::string name(knob);
  if (on_by_default && name.starts_with("enable_")) name.erase(0, 7);
  for (char& c : name)
    if (c == '_') c = '-';
  return (on_by_default ? "--no-" : "--") + name;
}

// Every reflected knob of Struct has a help line (a knob added without one does not compile).
template <class Struct, std::size_t N>
consteval bool every_knob_has_help(const knob_help (&table)[N]) {
  bool all = true;
  boost::hana::for_each(boost::hana::accessors<Struct>(), [&](auto pair) {
    all = all && !help_of(table, boost::hana::to<const char*>(boost::hana::first(pair))).empty();
  });
  return all;
}
static_assert(every_knob_has_help<propagate_options>(propagate_option_help),
              "devpass: a knob of propagate_options has no line in propagate_option_help");
static_assert(every_knob_has_help<propagate_knobs>(propagate_knob_help),
              "devpass: a knob of propagate_knobs has no line in propagate_knob_help");

}  // namespace devpass::reflection
