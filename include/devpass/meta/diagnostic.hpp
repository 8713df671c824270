// devpass/meta/diagnostic.hpp — compile errors that name the types they are about.
//
// A static_assert's message is a fixed string in C++20: it cannot say which phase, capture or
// capability is at fault. Where that matters, devpass first takes the size of an incomplete class
// template whose name is the message and whose arguments are the culprits, so the compiler's
// first error line reads (g++; clang says the same in its words)
//   error: invalid application of 'sizeof' to incomplete type 'devpass::diagnostic::
//     phase_expects_a_capability_no_earlier_phase_provides<devpass::propagation::elide_round_trips,
//     devpass::capabilities::copies_explicit>'
// and a static_assert after it says the rule in a sentence.
#pragma once

#include <type_traits>

#include "devpass/meta/type_list.hpp"

namespace devpass::diagnostic {

// Fails to compile, naming Message: instantiate it only where the error is certain.
template <class Message>
consteval bool report() {
  return sizeof(Message) == 0;  // Message is incomplete: this line is the error
}

// The first element of List that Pred does not hold for, or void (Pred: a class template with
// a bool `value`).
template <class List, template <class> class Holds>
struct first_failing {
  using type = void;
};
template <class T, class... Ts, template <class> class Holds>
struct first_failing<meta::type_list<T, Ts...>, Holds> {
  using type = std::conditional_t<Holds<T>::value, typename first_failing<meta::type_list<Ts...>, Holds>::type, T>;
};

// The first element of Sub not in Super, or void.
template <class Super>
struct in {
  template <class T>
  using holds = meta::contains<T, Super>;
};
template <class Sub, class Super>
using first_not_in_t = typename first_failing<Sub, in<Super>::template holds>::type;

// The messages (incomplete on purpose: never define them).
template <class Phase, class Capability>
struct phase_expects_a_capability_no_earlier_phase_provides;
template <class Policy, class Phase, class Capability>
struct under_this_policy_phase_expects_a_capability_no_earlier_compiled_in_phase_provides;
template <class Capture>
struct the_action_uses_a_capture_the_pattern_does_not_bind;
template <class Capture>
struct the_guard_reads_a_capture_the_pattern_does_not_bind;
template <class Action>
struct the_action_feeds_the_matched_use_but_the_rule_is_not_rooted_at_a_use;

}  // namespace devpass::diagnostic
