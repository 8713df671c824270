// devpass/pipeline/pipeline.hpp — phases composed at compile time.
//
// A phase (the concept pipeline::phase<P>) is any type with
//   static constexpr std::string_view name;
//   using expects   = type_list<capability...>;   what must hold before it runs (`requires_`,
//                                                   its name before, is still read: deprecated)
//   using provides  = type_list<capability...>;   what holds after it ran
//   template <class Policy> static constexpr bool compiled_in;   false drops it at compile time
//   template <class G, class Options> phase_result run(G&, const Options&) const;   (G: any model)
//   template <class Options> bool active(const Options&) const;    (optional) run-time selection
// A composite phase (several phases done as one: propagation::executorch_copies) has instead
//   template <class Policy, class G, class Options, class I> Result run_reporting(G&, const Options&, I&) const;
// which runs them, calls the instrumentation around each constituent, by its own name, and
// returns what they reported together (or void).
// make_pipeline(phase...) checks, at compile time, that each phase's requirements are provided
// by the phases before it: a pipeline in the wrong order does not compile. run<Policy> checks it
// again over the phases Policy compiles in, so a policy that drops a phase another one needs is
// a compile error too. (Phases a run-time option switches off are the options' business.) A policy is a struct of
// constexpr flags a user derives from the defaults; phases read it in `compiled_in`. The same
// pipeline serves the command line by running with a policy that compiles every phase in and
// lets the run-time options (`active`) choose.
#pragma once

#include <concepts>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "devpass/graph/graph.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/meta/type_list.hpp"
#include "devpass/pipeline/phase.hpp"

namespace devpass::pipeline {

using meta::type_list;

// Capabilities phases require and provide are any types (devpass's own: passes/capabilities.hpp).
// One with `static constexpr bool given_by_input = true` holds before the first phase.
template <class Capability>
inline constexpr bool given_by_input = requires {
  requires Capability::given_by_input;
};

namespace detail {
template <class Phase>
auto expected_by(int) -> typename Phase::expects;
template <class Phase>
auto expected_by(long) -> typename Phase::requires_;  // the deprecated name
template <class Phase>
auto expected_by(...) -> void;  // declares neither: the pipeline checks say so
}  // namespace detail
// What must hold before Phase runs: its `expects` (or, deprecated, its `requires_`).
template <class Phase>
using expects_of = decltype(detail::expected_by<Phase>(0));
template <class Phase>
inline constexpr bool declares_expects = !std::is_void_v<expects_of<Phase>>;

// The phase concept (the LLVM new pass manager's pass interface is the model): a name, what it
// expects and what it provides. How it runs (run, or run_reporting for a composite) and whether a
// policy compiles it in are asked where a pipeline runs it, with a graph, options and a policy.
namespace phase_requirements {
template <class Phase>
concept named = requires {
  { Phase::name } -> std::convertible_to<std::string_view>;
};
template <class Phase>
concept expects = declares_expects<Phase>;
template <class Phase>
concept provides = requires {
  requires meta::is_type_list_v<typename Phase::provides>;
};
}  // namespace phase_requirements
template <class Phase>
concept phase =
    phase_requirements::named<Phase> && phase_requirements::expects<Phase> && phase_requirements::provides<Phase>;

namespace detail {
// phase<Phase>, asserted one requirement at a time: the first error line says what is missing.
template <class Phase>
consteval bool check_phase() {
  static_assert(phase_requirements::named<Phase>,
                "devpass: a phase has a name: static constexpr std::string_view name = \"...\";");
  static_assert(phase_requirements::expects<Phase>,
                "devpass: a phase declares what must hold before it runs: using expects = type_list<capability...>;");
  static_assert(phase_requirements::provides<Phase>,
                "devpass: a phase declares what holds after it ran: using provides = type_list<capability...>;");
  return phase<Phase>;
}

template <class Provided, class... Phases>
struct order_check;
template <class Provided>
struct order_check<Provided> : std::true_type {};
// Whether every capability Phase expects holds: else a compile error whose first line names the
// phase and the first capability it lacks (meta/diagnostic.hpp).
template <class Required, class Provided>
using first_missing_t = diagnostic::first_not_in_t<Required, Provided>;
// The capabilities of Required the input does not give (a phase without `expects` is reported
// on its own, by check_phase).
template <class Required>
struct not_given {
  using type = type_list<>;
};
template <class... Required>
struct not_given<type_list<Required...>> {
  using type = meta::join_t<std::conditional_t<given_by_input<Required>, type_list<>, type_list<Required>>...>;
};
template <class Phase, class Provided>
consteval bool expectations_met() {
  using missing = first_missing_t<typename not_given<expects_of<Phase>>::type, Provided>;
  if constexpr (!std::is_void_v<missing>)
    return diagnostic::report<diagnostic::phase_expects_a_capability_no_earlier_phase_provides<Phase, missing>>();
  else
    return true;
}
template <class Policy, class Phase, class Provided>
consteval bool expectations_met_under() {
  using missing = first_missing_t<typename not_given<expects_of<Phase>>::type, Provided>;
  if constexpr (!std::is_void_v<missing>)
    return diagnostic::report<
        diagnostic::under_this_policy_phase_expects_a_capability_no_earlier_compiled_in_phase_provides<Policy, Phase,
                                                                                                       missing>>();
  else
    return true;
}

template <class Provided, class Phase, class... Rest>
struct order_check<Provided, Phase, Rest...> {
  static_assert(check_phase<Phase>());
  static constexpr bool phase_ok = expectations_met<Phase, Provided>();
  static_assert(phase_ok, "devpass: pipeline order: a phase requires a capability no earlier phase provides");
  static constexpr bool value =
      phase_ok && order_check<meta::join_t<Provided, typename Phase::provides>, Rest...>::value;
};

// The same check over the phases Policy compiles in: a phase that another phase's requirement
// depends on may be compiled out by a policy, and then the pipeline is wrong for that policy.
template <class Policy, class Provided, class... Phases>
struct compiled_order_check;
template <class Policy, class Provided>
struct compiled_order_check<Policy, Provided> : std::true_type {};
template <class Policy, class Provided, class Phase, class... Rest>
struct compiled_order_check<Policy, Provided, Phase, Rest...> {
  static_assert(check_phase<Phase>());
  static constexpr bool in = Phase::template compiled_in<Policy>;
  static constexpr bool phase_ok = [] {
    if constexpr (in)
      return expectations_met_under<Policy, Phase, Provided>();
    else
      return true;
  }();
  static_assert(phase_ok,
                "devpass: pipeline order under this policy: a phase requires a capability that no earlier phase "
                "compiled in by the policy provides");
  using next_provided = std::conditional_t<in, meta::join_t<Provided, typename Phase::provides>, Provided>;
  static constexpr bool value = phase_ok && compiled_order_check<Policy, next_provided, Rest...>::value;
};
}  // namespace detail

namespace detail {
// The options type a phase is written for: `Phase::options_type` where it (or its When) says.
template <class Phase>
struct options_of {
  using type = void;
};
template <class Phase>
requires requires { typename Phase::options_type; }
struct options_of<Phase> {
  using type = typename Phase::options_type;
};
// Of two phases' options types, the one that is both (the more derived); void for none, and
// `conflicting` when neither derives from the other.
struct conflicting_options {};
template <class A, class B>
struct more_derived {
  using type = std::conditional_t<std::is_base_of_v<A, B>, B,
                                  std::conditional_t<std::is_base_of_v<B, A>, A, conflicting_options>>;
};
template <class B>
struct more_derived<void, B> {
  using type = B;
};
template <class A>
struct more_derived<A, void> {
  using type = A;
};
template <>
struct more_derived<void, void> {
  using type = void;
};
template <class Acc, class... Phases>
struct fold_options {
  using type = Acc;
};
template <class Acc, class Phase, class... Rest>
struct fold_options<Acc, Phase, Rest...> {
  using type = typename fold_options<typename more_derived<Acc, typename options_of<Phase>::type>::type, Rest...>::type;
};
}  // namespace detail
// The options a pipeline of Phases runs with when given braced options (`run<P>(g, {...})`): the
// most derived of the options types its phases declare (device propagation's: propagate_options;
// a team's phases over its own struct derived from it: that struct). void when none declares one.
template <class... Phases>
using pipeline_options_t = typename detail::fold_options<void, Phases...>::type;

template <class Phase, class Options>
bool phase_active(const Phase& phase, const Options& options) {
  if constexpr (requires { phase.active(options); })
    return phase.active(options);
  else
    return true;
}

template <class... Phases>
struct pipeline_t {
  std::tuple<Phases...> phases;
  using options_type = pipeline_options_t<Phases...>;

  // Runs the phases that Policy compiles in and the options select, in order, and returns what
  // they reported added up (add_result, phase.hpp): Total is phase_result (the rewrite counters)
  // or a pass's own result type (device propagation's adds the copies made). The
  // instrumentation sees each phase's own result as it ends.
  template <class Policy, class Total = phase_result, class G, class Options,
            class Instrumentation = no_instrumentation>
  Total run(G& g, const Options& options, Instrumentation&& instrumentation = {}) const {
    static_assert(detail::compiled_order_check<Policy, type_list<>, Phases...>::value);
    Total total{};
    std::apply([&](const auto&... phase) { (run_one<Policy>(phase, g, options, instrumentation, total), ...); },
               phases);
    return total;
  }
  // The same with braced options, `run<Policy>(g, {.policy = ...})`: they are the pipeline's
  // options_type (a deduced Options cannot be braced).
  // (Braced is its own template parameter, always options_type: a pipeline whose phases declare
  // none has no such overload.)
  template <class Policy, class Total = phase_result, class Braced = options_type, class G,
            class Instrumentation = no_instrumentation>
  requires(!std::is_void_v<Braced>) Total
      run(G& g, const std::type_identity_t<Braced>& options, Instrumentation&& instrumentation = {})
  const {
    static_assert(!std::is_same_v<Braced, detail::conflicting_options>,
                  "devpass: the phases of this pipeline declare options types neither of which derives from the "
                  "other; pass the options as an object of the type they all read, not braced");
    // Five template arguments: only the deduced overload above takes them.
    return run<Policy, Total, G, options_type, Instrumentation>(g, options,
                                                                std::forward<Instrumentation>(instrumentation));
  }

 private:
  template <class Policy, class Phase, class G, class Options, class Instrumentation, class Total>
  static void run_one(const Phase& phase, G& g, const Options& options, Instrumentation& instrumentation,
                      Total& total) {
    if constexpr (Phase::template compiled_in<Policy>) {
      if (!phase_active(phase, options)) return;
      // A composite phase reports its constituents to the instrumentation itself, and returns
      // what they reported together (or nothing).
      if constexpr (requires { phase.template run_reporting<Policy>(g, options, instrumentation); }) {
        using composite_result = decltype(phase.template run_reporting<Policy>(g, options, instrumentation));
        if constexpr (std::is_void_v<composite_result>)
          phase.template run_reporting<Policy>(g, options, instrumentation);
        else
          add_result(total, phase.template run_reporting<Policy>(g, options, instrumentation));
      } else {
        instrumentation.before_phase(Phase::name, g);
        // The phase's own result type (a pass may report more than phase_result), passed on as it is.
        const auto result = phase.run(g, options);
        instrumentation.after_phase(Phase::name, g, result);
        add_result(total, result);
      }
    }
  }
};

template <class... Phases>
constexpr pipeline_t<Phases...> make_pipeline(Phases... phases) {
  static_assert(detail::order_check<type_list<>, Phases...>::value);
  return {{phases...}};
}

}  // namespace devpass::pipeline
