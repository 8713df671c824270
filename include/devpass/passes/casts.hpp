// devpass/passes/casts.hpp — the cast family: a cast where a kernel wants an operand in another
// dtype than the value has, and cast round trips that change nothing removed. Two rule tables,
// written with the DSL alone (docs/patterns.md), over any graph model with an op vocabulary and
// add_node (devpass::graph: kernel names; a compiler's own IR: its enum), CastOp the model's cast:
//
//   insert:  on_use(any.as(k), any.as(v)) [has_cast_signature<CastOp>(k) && wants_another_dtype(k, v)]
//              / share_into_use(build<CastOp>(v).with_dtype(wanted_dtype).named<"cast">())
//   elide:   op<CastOp>(op<CastOp>(any.as(x)).as(w)).as(n) [same_dtype(n, x) && round_trips_exactly(x, w)]
//              / (rewire(n, x), erase(n), erase_if_dead(w))
//
// What each slot wants is the options' cast_signatures (passes/cast_signatures.hpp): the rules
// read `ctx.options.signatures`, a `const cast_signatures*` (derive the options from
// cast_options). Insertion makes one cast per (value, dtype), where the value lives (a host call
// for a value on the host, a delegate on the value's device), named "<value's node>@cast", and
// feeds every slot that wants that dtype from it. A copy's operand is never cast (a copy keeps its
// input's layout), nor a cast's own (its signature, if the table has one, is not read), and a slot
// past an op's list, or null in it, takes any dtype. Elision drops cast(cast(x)) back to x's dtype only when the first cast widens
// exactly (graph/dtype.hpp, widens_exactly: f16 -> f32 -> f16, int8 -> int32 -> int8), never a
// lossy pair (f32 -> f16 -> f32, int32 -> float32 -> int32); the inner cast goes when nothing
// else reads it.
//
//   insert_casts(g, signatures)      runs the insertion; returns its rewrite counters
//   elide_cast_round_trips(g)        runs the elision
//   casts::insert_casts<CastOp>, casts::elide_round_trips<CastOp>   the same as pipeline phases
// CastOp is "aten._to_copy.default" unless given (devpass::graph's cast, as ATen names it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/op_name.hpp"
#include "devpass/passes/capabilities.hpp"
#include "devpass/passes/cast_signatures.hpp"
#include "devpass/pipeline/pipeline.hpp"
#include "devpass/pipeline/table_phase.hpp"
#include "devpass/rules.hpp"

namespace devpass {

// The options the cast rules read: the signatures (none: nothing to insert). Options of one's own
// derive from it, or have a member `signatures` of this type.
struct cast_options {
  const cast_signatures* signatures = nullptr;
};

namespace casts {

using namespace devpass::dsl;
using pattern::fixed_string;

// devpass::graph's cast: ATen's name for a dtype conversion.
inline constexpr fixed_string default_cast_op = "aten._to_copy.default";

inline constexpr auto k = "k"_c;
inline constexpr auto v = "v"_c;
inline constexpr auto x = "x"_c;
inline constexpr auto w = "w"_c;
inline constexpr auto n = "n"_c;

// The signatures the options hold (null: none).
template <class Options>
const cast_signatures* signatures_in(const Options& options) {
  static_assert(
      requires { options.signatures; },
      "devpass: the cast rules read `ctx.options.signatures` (a const cast_signatures*): derive the "
      "options from devpass::cast_options");
  return options.signatures;
}

// The entry of node c's op (the model's vocabulary, as graph_model<G>::op gives it), or null.
template <class G>
const cast_signatures::slots* signature_of(const cast_signatures& signatures, const G& g, vertex c) {
  using op_type = pattern::op_type_t<G>;
  const op_type op = graph_model<G>::op(g, c);
  if constexpr (std::is_same_v<op_type, op_name>) {
    return signatures.find(op);
  } else if constexpr (std::is_enum_v<op_type>) {
    const auto i = static_cast<std::size_t>(op);
    return i < std::size(graph_model<G>::op_names) ? signatures.find(std::string_view(graph_model<G>::op_names[i]))
                                                   : nullptr;
  } else {
    return signatures.find(std::string_view(op));
  }
}

// Whether node c runs the model's cast.
template <fixed_string CastOp, class G>
bool is_cast(const G& g, vertex c) {
  pattern::capture_set<pattern::type_list<>> none;
  return op<CastOp>.match(g, value_ref{c, 0}, none);
}

// The dtype the consumer of `site` wants there, or nullopt (any).
template <class Ctx>
std::optional<dtype> wanted_at(const Ctx& ctx, const std::optional<devpass::use>& site) {
  const cast_signatures* signatures = signatures_in(ctx.options);
  if (!signatures || !site) return std::nullopt;
  return cast_signatures::wanted_in(signature_of(*signatures, ctx.g, site->consumer), site->slot);
}

// k's op has an entry in the signatures, and k is neither a copy nor the cast. Reads only k: an on_use rule tests
// it once per node (rules/guard_split.hpp).
template <fixed_string CastOp, class K>
struct has_cast_signature_t : pattern::guard_base<has_cast_signature_t<CastOp, K>> {
  using reads = pattern::type_list<K>;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set& caps) const {
    const vertex c = caps.get(K{}).producer;
    const cast_signatures* signatures = signatures_in(ctx.options);
    return signatures && !is_copy(role_of(ctx.g, c)) && signature_of(*signatures, ctx.g, c) &&
           !is_cast<CastOp>(ctx.g, c);
  }
  static std::string describe() { return devpass::concat({"has_cast_signature(", K::name(), ")"}); }
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    if (test(ctx, caps)) return std::nullopt;
    const vertex c = caps.get(K{}).producer;
    const std::string head =
        devpass::concat({describe(), " is false: ", K::name(), " = '", display_name(ctx.g, c), "'"});
    if (!signatures_in(ctx.options)) return head + ", and the options hold no signatures";
    if (is_copy(role_of(ctx.g, c))) return head + " is a copy (which keeps its input's layout)";
    if (signature_of(*signatures_in(ctx.options), ctx.g, c)) return head + " is a cast (whose operand is never cast)";
    return devpass::concat({head, " runs ", pattern::detail::op_text(ctx.g, c), ", which no signature names"});
  }
};
template <fixed_string CastOp, class K>
constexpr has_cast_signature_t<CastOp, K> has_cast_signature(K) {
  return {};
}

// The slot of k the rule matched (on_use's site) wants a dtype that value v does not have. A guard
// type of its own: it reads the matched use, which a predicate on values cannot.
template <class K, class V>
struct wants_another_dtype_t : pattern::guard_base<wants_another_dtype_t<K, V>> {
  using reads = pattern::type_list<K, V>;
  template <class Ctx, class Set>
  bool test(const Ctx& ctx, const Set& caps) const {
    const auto wanted = wanted_at(ctx, caps.site);
    const value_ref value = caps.get(V{});
    return wanted && value.output < output_count(ctx.g, value.producer) && value_dtype(ctx.g, value) != *wanted;
  }
  static std::string describe() { return devpass::concat({"wants_another_dtype(", K::name(), ", ", V::name(), ")"}); }
  template <class Ctx, class Set>
  std::optional<std::string> explain(const Ctx& ctx, const Set& caps) const {
    if (test(ctx, caps)) return std::nullopt;
    const std::string slot = caps.site ? std::to_string(caps.site->slot) : std::string("?");
    const std::string consumer = "'" + value_name(ctx.g, caps.get(K{})) + "'";
    const auto wanted = wanted_at(ctx, caps.site);
    if (!wanted) return devpass::concat({describe(), " is false: ", consumer, " takes any dtype in slot ", slot});
    return devpass::concat({describe(), " is false: slot ", slot, " of ", consumer, " wants ", to_string(*wanted), ", ",
                            V::name(), " = '", value_name(ctx.g, caps.get(V{})), "' is ",
                            to_string(value_dtype(ctx.g, caps.get(V{})))});
  }
};
template <class K, class V>
constexpr wants_another_dtype_t<K, V> wants_another_dtype(K, V) {
  return {};
}

// The cast's output dtype: what the matched slot wants.
inline constexpr auto wanted_dtype = [](const auto& ctx, const build_site& s) {
  return wanted_at(ctx, s.site).value_or(value_dtype(ctx.g, s.like));
};

template <fixed_string CastOp>
inline constexpr auto insert_table =
    make_table(on_use(any.as(k), any.as(v))[has_cast_signature<CastOp>(k) && wants_another_dtype(k, v)] /
               share_into_use(build<CastOp>(v).with_dtype(wanted_dtype).template named<"cast">()));

template <fixed_string CastOp>
inline constexpr auto elide_table =
    make_table(op<CastOp>(op<CastOp>(any.as(x)).as(w)).as(n)[same_dtype(n, x) && round_trips_exactly(x, w)] /
               (rewire(n, x), erase(n), erase_if_dead(w)));

// Insertion runs when the options hold signatures.
struct when_signatures_given {
  template <class Policy>
  static constexpr bool compiled_in = true;
  template <class Options>
  bool active(const Options& o) const {
    return signatures_in(o) != nullptr;
  }
};

template <fixed_string CastOp = default_cast_op>
struct insert_casts
    : pipeline::table_phase<"insert-casts", insert_table<CastOp>, pipeline::type_list<>,
                            pipeline::type_list<capabilities::kernel_dtypes_met>, when_signatures_given> {
  static constexpr std::string_view description = "insert a cast where a kernel wants another dtype (signatures)";
};
template <fixed_string CastOp = default_cast_op>
struct elide_round_trips : pipeline::table_phase<"elide-cast-round-trips", elide_table<CastOp>, pipeline::type_list<>,
                                                 pipeline::type_list<>> {
  static constexpr std::string_view description = "drop cast(cast(x)) back to x's dtype where the first widens exactly";
};

}  // namespace casts

// Casts inserted for `signatures` on any graph model with an op vocabulary and add_node; the
// rewrite counters (nodes_added: the casts made).
template <pattern::fixed_string CastOp = casts::default_cast_op, class G>
rewrite_counters insert_casts(G& g, const cast_signatures& signatures) {
  static_assert(check_graph_model<G>());
  const cast_options options{&signatures};
  rules::rewrite_context<cast_options, G> ctx(g, options);
  return rules::apply_rules(casts::insert_table<CastOp>, ctx);
}

// Exact cast round trips removed; the rewrite counters (nodes_removed: the casts dropped).
template <pattern::fixed_string CastOp = casts::default_cast_op, class G>
rewrite_counters elide_cast_round_trips(G& g) {
  static_assert(check_graph_model<G>());
  const cast_options options;
  rules::rewrite_context<cast_options, G> ctx(g, options);
  return rules::apply_rules(casts::elide_table<CastOp>, ctx);
}

}  // namespace devpass
