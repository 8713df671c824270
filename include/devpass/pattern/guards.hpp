// devpass/pattern/guards.hpp — conditions on captured values, written in a rule's [brackets].
//
//   guard := same_device(a, b) | on_host(a) | on_device(a) | device_delegate(a)
//          | one_use(a) | many_uses(a) | unused(a) | dtype_is<T>(a) | same_dtype(a, b)
//          | round_trips_exactly(a, b)   a cast of a to b's dtype and back is the identity
//          | has_trait, rank_is, shape_is, has_attr, attr_is   (value_guards.hpp)
//          | satisfies(f, a, b, ...)      f(ctx, value_ref...) -> bool, a user predicate
//          | when(f)                      f(ctx) -> bool, reads no capture (e.g. an option)
//          | guard && guard | guard || guard | !guard
// A guard lists the captures it reads (`reads`); a rule whose guard reads a capture its pattern
// does not bind does not compile. Guards only read the graph. explain_guard(g, ctx, caps) says
// why a guard is false, from the same test.
#pragma once

#include <optional>
#include <string>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/structure.hpp"
#include "devpass/pattern/capture.hpp"

namespace devpass::pattern {

template <class Self>
struct guard_base {};

template <class G>
concept guard = std::is_base_of_v<guard_base<G>, G>;

// Why guard `g` is false for these captures, nullopt when it holds. The built-in guards explain
// themselves from the test they run (`same_device(h, x) is false: h = 'c' on cuda:0, x = 'x' on
// cpu`); a user's own guard type without explain() is named by its describe().
template <class G, class Ctx, class Set>
std::optional<std::string> explain_guard(const G& g, const Ctx& ctx, const Set& caps) {
  if constexpr (requires { g.explain(ctx, caps); }) {
    return g.explain(ctx, caps);
  } else {
    if (g.test(ctx, caps)) return std::nullopt;
    return g.describe() + " is false";
  }
}

namespace detail {
template <class... Caps>
std::string cap_names() {
  std::string s;
  std::size_t i = 0;
  ((s.append(i++ ? ", " : "").append(Caps::name())), ...);
  return s;
}
// "'id' on cuda:0": a captured value and where it lives, for explanations.
template <class G>
std::string value_text(const G& g, value_ref v) {
  return devpass::concat({"'", value_name(g, v), "' on ", to_string(location_of(g, v))});
}
}  // namespace detail

// A guard from a predicate on the values of some captures. Tag names the guard in describe().
template <fixed_string Tag, class F, class... Caps>
struct value_guard : guard_base<value_guard<Tag, F, Caps...>> {
  using reads = type_list<Caps...>;
  [[no_unique_address]] F f;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set& caps) const {
    return f(ctx, caps.get(Caps{})...);
  }
  std::string describe() const { return devpass::concat({Tag.view(), "(", detail::cap_names<Caps...>(), ")"}); }
  // Why it is false, from the same test: each capture's value and where it lives.
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    if (test(ctx, caps)) return std::nullopt;
    std::string why = describe() + " is false:";
    std::size_t i = 0;
    ((why.append(i++ ? ", " : " ")
          .append(Caps::name())
          .append(" = ")
          .append(detail::value_text(ctx.g, caps.get(Caps{})))),
     ...);
    return why;
  }
};

template <fixed_string Tag, class... Caps, class F>
constexpr value_guard<Tag, F, Caps...> make_guard(F f) {
  return {{}, f};
}

template <class A, class B>
constexpr auto same_device(A, B) {
  return make_guard<"same_device", A, B>(
      [](const auto& ctx, value_ref a, value_ref b) { return location_of(ctx.g, a) == location_of(ctx.g, b); });
}
template <class A>
constexpr auto on_host(A) {
  return make_guard<"on_host", A>([](const auto& ctx, value_ref a) { return location_of(ctx.g, a).is_host(); });
}
template <class A>
constexpr auto on_device(A) {
  return make_guard<"on_device", A>([](const auto& ctx, value_ref a) { return !location_of(ctx.g, a).is_host(); });
}
// The captured node is a delegate whose partitioner device is not the host.
template <class A>
constexpr auto device_delegate(A) {
  return make_guard<"device_delegate", A>([](const auto& ctx, value_ref a) {
    return role_of(ctx.g, a.producer) == op_kind::delegate && !node_device(ctx.g, a.producer).is_host();
  });
}
template <class A>
constexpr auto one_use(A) {
  return make_guard<"one_use", A>([](const auto& ctx, value_ref a) { return use_count(ctx.g, a) == 1; });
}
template <class A>
constexpr auto many_uses(A) {
  return make_guard<"many_uses", A>([](const auto& ctx, value_ref a) { return use_count(ctx.g, a) > 1; });
}
template <class A>
constexpr auto unused(A) {
  return make_guard<"unused", A>([](const auto& ctx, value_ref a) { return use_count(ctx.g, a) == 0; });
}
template <dtype T, class A>
constexpr auto dtype_is(A) {
  // A consumer capture of a node without outputs has no value, and so no dtype.
  return make_guard<"dtype_is", A>([](const auto& ctx, value_ref a) {
    return a.output < output_count(ctx.g, a.producer) && value_dtype(ctx.g, a) == T;
  });
}
// a and b have the same dtype.
template <class A, class B>
constexpr auto same_dtype(A, B) {
  return make_guard<"same_dtype", A, B>([](const auto& ctx, value_ref a, value_ref b) {
    return a.output < output_count(ctx.g, a.producer) && b.output < output_count(ctx.g, b.producer) &&
           value_dtype(ctx.g, a) == value_dtype(ctx.g, b);
  });
}
// A cast of a to b's dtype and back is the identity (dtype.hpp, widens_exactly).
template <class A, class B>
constexpr auto round_trips_exactly(A, B) {
  return make_guard<"round_trips_exactly", A, B>([](const auto& ctx, value_ref a, value_ref b) {
    return a.output < output_count(ctx.g, a.producer) && b.output < output_count(ctx.g, b.producer) &&
           devpass::widens_exactly(value_dtype(ctx.g, a), value_dtype(ctx.g, b));
  });
}
template <class F, class... Caps>
constexpr auto satisfies(F f, Caps...) {
  return make_guard<"satisfies", Caps...>(f);
}

// A guard that reads no capture, only the context (an option, a policy flag).
template <class F>
struct context_guard : guard_base<context_guard<F>> {
  using reads = type_list<>;
  [[no_unique_address]] F f;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set&) const {
    return f(ctx);
  }
  static std::string describe() { return "when(...)"; }
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    if (test(ctx, caps)) return std::nullopt;
    return std::string("when(...) is false");
  }
};
template <class F>
constexpr context_guard<F> when(F f) {
  return {{}, f};
}

template <guard A, guard B>
struct and_guard : guard_base<and_guard<A, B>> {
  using reads = join_t<typename A::reads, typename B::reads>;
  A a;
  B b;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set& caps) const {
    return a.test(ctx, caps) && b.test(ctx, caps);
  }
  std::string describe() const { return devpass::concat({a.describe(), " && ", b.describe()}); }
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    if (auto why = explain_guard(a, ctx, caps)) return why;
    return explain_guard(b, ctx, caps);
  }
};
template <guard A, guard B>
struct or_guard : guard_base<or_guard<A, B>> {
  using reads = join_t<typename A::reads, typename B::reads>;
  A a;
  B b;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set& caps) const {
    return a.test(ctx, caps) || b.test(ctx, caps);
  }
  std::string describe() const { return devpass::concat({"(", a.describe(), " || ", b.describe(), ")"}); }
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    auto why_a = explain_guard(a, ctx, caps);
    if (!why_a) return std::nullopt;
    auto why_b = explain_guard(b, ctx, caps);
    if (!why_b) return std::nullopt;
    return devpass::concat({"neither ", *why_a, " nor ", *why_b});
  }
};
template <guard A>
struct not_guard : guard_base<not_guard<A>> {
  using reads = typename A::reads;
  A a;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set& caps) const {
    return !a.test(ctx, caps);
  }
  std::string describe() const { return devpass::concat({"!", a.describe()}); }
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    if (test(ctx, caps)) return std::nullopt;
    return describe() + " is false: " + a.describe() + " holds";
  }
};

template <guard A, guard B>
constexpr and_guard<A, B> operator&&(A a, B b) {
  return {{}, a, b};
}
template <guard A, guard B>
constexpr or_guard<A, B> operator||(A a, B b) {
  return {{}, a, b};
}
template <guard A>
constexpr not_guard<A> operator!(A a) {
  return {{}, a};
}

// The guard of a rule written without brackets.
struct always : guard_base<always> {
  using reads = type_list<>;
  template <class Ctx, class Set>
  bool test(const Ctx&, const Set&) const {
    return true;
  }
  static std::string describe() { return ""; }
};

}  // namespace devpass::pattern
