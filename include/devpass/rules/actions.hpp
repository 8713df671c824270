// devpass/rules/actions.hpp — what a rule does once it matched, written after its `/`.
//
//   action := rewire(from, to)             every use of `from` now reads `to`
//           | erase(a)                     removes `a`, which must be unused (the rule shrinks)
//           | erase_if_dead(a)             removes `a` when nothing uses it any more
//           | copy_into_use<K>(x, at)      on_use roots: a new copy of kind K of `x` feeds the
//                                          matched slot; its device is where `at` runs
//           | share_copy_into_use<K>(x, at) the same, reusing an existing K copy of `x` to that device
//                                          (resident, made once at load, for a constant's value
//                                          where the options say resident_constants)
//           | copy_after<K>(x, moves)      a copy of `x` (one per value: reused if present) takes over
//                                          the uses for which moves(ctx, use) is true
//           | place_on(x, at)              records that value `x` lives where `at` runs (an input's
//                                          or constant's node device too)
//           | apply(f, a, b, ...)          f(ctx, value_ref...), a user action
//           | (action, action, ...)        in order
// An action lists the captures it uses; a rule whose action uses a capture its pattern does not
// bind does not compile. Actions keep the graph valid and tell the driver what to revisit; they
// never hold a descriptor across a mutation they make.
#pragma once

#include <string>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/structure.hpp"
#include "devpass/pattern/capture.hpp"
#include "devpass/rules/context.hpp"

namespace devpass::rules {

using pattern::join_t;
using pattern::type_list;

template <class Self>
struct action_base {};
template <class A>
concept action = std::is_base_of_v<action_base<A>, A>;

// The device a captured node runs on (a delegate's or copy's device), else where its value lives
// (structure.hpp; named here too, where actions have always found it).
using devpass::device_of;

namespace detail {
// Values with more uses than this have their copies looked up in the context's copy index; for
// the rest (most values have one or two uses) a scan of the uses costs less than hashing, and no
// index entry is allocated per copy.
inline constexpr std::size_t copy_index_min_uses = 32;

// An existing copy of kind Kind of `value` whose device side is `side`: a scan of the value's
// uses, or for a value with many uses (a shared copy is asked for once per use: quadratic in the
// fan-out) the context's copy index, falling back to the scan.
template <op_kind Kind, class Ctx>
std::optional<vertex> find_copy(Ctx& ctx, value_ref value, device side) {
  const bool indexed = boost::out_degree(value.producer, ctx.g) > copy_index_min_uses;
  if (indexed)
    if (auto known = ctx.copies.lookup(ctx.g, value, Kind, side)) return known;
  std::optional<vertex> found;
  for_each_use(ctx.g, value, [&](use u) {
    if (!found && role_of(ctx.g, u.consumer) == Kind && node_device(ctx.g, u.consumer) == side) found = u.consumer;
  });
  if (found && indexed) ctx.copies.remember(value, Kind, side, *found);
  return found;
}
// A copy of `value` made through the context (graph_model.hpp, copy_request), remembered in the
// copy index when the value has many uses, so find_copy finds it without a scan.
template <op_kind Kind, class Ctx>
vertex make_copy(Ctx& ctx, value_ref value, device side, copy_naming naming, devpass::use site = {},
                 bool resident = false) {
  static_assert(is_copy(Kind), "devpass: copy actions take h2d_copy, d2h_copy or d2d_copy");
  const vertex copy = ctx.add_copy(copy_request{Kind, side, value, naming, site, resident});
  if (naming != copy_naming::after_use && boost::out_degree(value.producer, ctx.g) > copy_index_min_uses)
    ctx.copies.remember(value, Kind, side, copy);
  return copy;
}
// Whether a shared copy of `value` is made resident: once, when the method is loaded, not on every
// execution. A constant's value is the same on every execution, so where the options ask for it
// (propagate_options::resident_constants) its one copy per device is loaded there once: the
// constant lives on each device that reads it. Options without the knob make every copy per execution.
template <class Ctx>
bool copies_resident(const Ctx& ctx, value_ref value) {
  if constexpr (requires { static_cast<bool>(ctx.options.resident_constants); })
    return ctx.options.resident_constants && is_constant_value(ctx.g, value);
  else
    return false;
}
// The Kind copy of `value` to `side` that a shared copy action feeds its use from: the one there
// is, else a new one named after the value (and the device, but for a d2h: one per value),
// resident when copies_resident says so.
template <op_kind Kind, class Ctx>
vertex shared_copy(Ctx& ctx, value_ref value, device side) {
  if (const std::optional<vertex> found = find_copy<Kind>(ctx, value, side)) return *found;
  return make_copy<Kind>(ctx, value, side,
                         Kind == op_kind::d2h_copy ? copy_naming::after_value : copy_naming::after_value_and_device, {},
                         copies_resident(ctx, value));
}
}  // namespace detail

template <class From, class To>
struct rewire_t : action_base<rewire_t<From, To>> {
  using uses = type_list<From, To>;
  static constexpr bool erases = false;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const value_ref from = caps.get(From{}), to = caps.get(To{});
    // The uses it moves are touched as it finds them: one walk of from's out-edges, not two.
    replace_uses_if(ctx.g, from, to, [&](use u) {
      ctx.touch(u.consumer);
      return false;
    });
    ctx.touch(to.producer);
    ctx.touch(from.producer);
  }
  static std::string describe() { return devpass::concat({"rewire(", From::name(), ", ", To::name(), ")"}); }
};
template <class From, class To>
constexpr rewire_t<From, To> rewire(From, To) {
  return {};
}

template <class A, bool OnlyIfDead>
struct erase_t : action_base<erase_t<A, OnlyIfDead>> {
  using uses = type_list<A>;
  static constexpr bool erases = !OnlyIfDead;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const vertex v = caps.get(A{}).producer;
    if (is_erased(ctx.g, v)) return;
    if (boost::out_degree(v, ctx.g) != 0) {
      if constexpr (OnlyIfDead)
        return;
      else
        throw graph_error("", display_name(ctx.g, v), "uses", "a rule erases this node while it still has uses");
    }
    ctx.remove(v);
  }
  static std::string describe() { return devpass::concat({OnlyIfDead ? "erase_if_dead(" : "erase(", A::name(), ")"}); }
};
template <class A>
constexpr erase_t<A, false> erase(A) {
  return {};
}
template <class A>
constexpr erase_t<A, true> erase_if_dead(A) {
  return {};
}

template <op_kind Kind, bool Share, class X, class At>
struct copy_into_use_t : action_base<copy_into_use_t<Kind, Share, X, At>> {
  using uses = type_list<X, At>;
  static constexpr bool erases = false;
  static constexpr bool needs_site = true;  // it feeds the matched use: on_use roots only
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const value_ref x = caps.get(X{});
    const devpass::use site = caps.site.value();
    const device side = Kind == op_kind::d2h_copy ? device_of(ctx.g, x) : device_of(ctx.g, caps.get(At{}));
    // A copy per use is named after the use.
    const vertex copy = Share ? detail::shared_copy<Kind>(ctx, x, side)
                              : detail::make_copy<Kind>(ctx, x, side, copy_naming::after_use, site);
    set_operand(ctx.g, site.consumer, site.slot, value_ref{copy, 0});
    ctx.touch(site.consumer);
    ctx.touch(x.producer);
  }
  static std::string describe() {
    return devpass::concat(
        {Share ? "share_copy_into_use<" : "copy_into_use<", to_string(Kind), ">(", X::name(), ", ", At::name(), ")"});
  }
};
template <op_kind Kind, class X, class At>
constexpr copy_into_use_t<Kind, false, X, At> copy_into_use(X, At) {
  return {};
}
template <op_kind Kind, class X, class At>
constexpr copy_into_use_t<Kind, true, X, At> share_copy_into_use(X, At) {
  return {};
}

template <op_kind Kind, class X, class Moves>
struct copy_after_t : action_base<copy_after_t<Kind, X, Moves>> {
  using uses = type_list<X>;
  static constexpr bool erases = false;
  [[no_unique_address]] Moves moves;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const value_ref x = caps.get(X{});
    const device source = device_of(ctx.g, x);
    const device side = Kind == op_kind::d2h_copy ? source : cpu_device;
    auto copy = detail::find_copy<Kind>(ctx, x, side);
    if (!copy) copy = detail::make_copy<Kind>(ctx, x, side, copy_naming::after_value);
    const value_ref to{*copy, 0};
    std::vector<devpass::use> moved;
    for_each_use(ctx.g, x, [&](devpass::use u) {
      if (u.consumer != *copy && moves(ctx, u)) moved.push_back(u);
    });
    for (const devpass::use u : moved) {
      set_operand(ctx.g, u.consumer, u.slot, to);
      ctx.touch(u.consumer);
    }
    ctx.touch(x.producer);
  }
  static std::string describe() { return devpass::concat({"copy_after<", to_string(Kind), ">(", X::name(), ", ...)"}); }
};
template <op_kind Kind, class X, class Moves>
constexpr copy_after_t<Kind, X, Moves> copy_after(X, Moves moves) {
  return {{}, moves};
}

template <class X, class At>
struct place_on_t : action_base<place_on_t<X, At>> {
  using uses = type_list<X, At>;
  static constexpr bool erases = false;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    const value_ref x = caps.get(X{});
    const device where = device_of(ctx.g, caps.get(At{}));
    mark_device(ctx.g, x, where);
    if (is_source(role_of(ctx.g, x.producer))) set_source_device(ctx.g, x.producer, where);
    ctx.touch_uses(x);
    ctx.touch(x.producer);
  }
  static std::string describe() { return devpass::concat({"place_on(", X::name(), ", ", At::name(), ")"}); }
};
template <class X, class At>
constexpr place_on_t<X, At> place_on(X, At) {
  return {};
}

template <class F, class... Caps>
struct apply_t : action_base<apply_t<F, Caps...>> {
  using uses = type_list<Caps...>;
  static constexpr bool erases = false;
  [[no_unique_address]] F f;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    f(ctx, caps.get(Caps{})...);
  }
  static std::string describe() { return "apply(...)"; }
};
template <class F, class... Caps>
constexpr apply_t<F, Caps...> apply(F f, Caps...) {
  return {{}, f};
}

// Whether an action feeds the matched use (`static constexpr bool needs_site = true`): a rule
// whose root is not on_use cannot have one.
template <class A>
constexpr bool action_needs_site() {
  if constexpr (requires { A::needs_site; })
    return A::needs_site;
  else
    return false;
}

template <action A, action B>
struct sequence_t : action_base<sequence_t<A, B>> {
  using uses = join_t<typename A::uses, typename B::uses>;
  static constexpr bool erases = A::erases || B::erases;
  static constexpr bool needs_site = action_needs_site<A>() || action_needs_site<B>();
  A a;
  B b;
  template <class Ctx, class Set>
  void apply(Ctx& ctx, const Set& caps) const {
    a.apply(ctx, caps);
    b.apply(ctx, caps);
  }
  std::string describe() const { return devpass::concat({a.describe(), ", ", b.describe()}); }
};
template <action A, action B>
constexpr sequence_t<A, B> operator,(A a, B b) {
  return {{}, a, b};
}

}  // namespace devpass::rules
