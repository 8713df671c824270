// devpass/passes/cast_signatures.hpp — which dtype a kernel wants in each operand slot: what the
// cast family (passes/casts.hpp) inserts casts for. One entry per op name (the model's own
// vocabulary, as text): a list with one element per slot, a dtype or none ("any dtype").
//
//   cast_signatures s;
//   s.set("aten.mm.default", {dtype::float16, dtype::float16});
//   s.set("aten.relu.default", {std::nullopt});
//   s.wanted("aten.mm.default", 1)     float16
//   s.wanted("aten.relu.default", 0)   nullopt: any dtype
//   s.wanted("aten.mm.default", 2)     nullopt: a slot past the list takes any dtype
//
// Loaded from JSON by io/cast_signatures_json.hpp (`{"aten.mm.default": ["float16", "float16"],
// "relu": [null]}`). Entries are kept in name order, so walking them is deterministic. Each name
// is interned too (graph/op_name.hpp): a model whose vocabulary is devpass::op_name (devpass::graph)
// finds a node's entry by the 32-bit id its node already holds, with no string compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devpass/graph/dtype.hpp"
#include "devpass/graph/op_name.hpp"

namespace devpass {

class cast_signatures {
 public:
  using slots = std::vector<std::optional<dtype>>;  // slot i: the dtype it wants, or any

  // Sets op's entry (replacing one it had).
  void set(std::string_view op, slots wanted) {
    if (const auto at = by_name_.find(op); at != by_name_.end()) {
      slots_[at->second] = std::move(wanted);
      return;
    }
    by_name_.emplace(std::string(op), slots_.size());
    by_id_.emplace(op_name::of(op).id(), slots_.size());
    slots_.push_back(std::move(wanted));
  }

  // op's entry, or null when it has none.
  [[nodiscard]] const slots* find(std::string_view op) const {
    const auto at = by_name_.find(op);
    return at == by_name_.end() ? nullptr : &slots_[at->second];
  }
  [[nodiscard]] const slots* find(op_name op) const {
    const auto at = by_id_.find(op.id());
    return at == by_id_.end() ? nullptr : &slots_[at->second];
  }
  // The dtype an entry wants in `slot`; nullopt where it takes any (no entry, a null slot, a slot
  // past the entry's list).
  [[nodiscard]] static std::optional<dtype> wanted_in(const slots* entry, std::uint32_t slot) {
    if (!entry || slot >= entry->size()) return std::nullopt;
    return (*entry)[slot];
  }
  template <class Op>
  [[nodiscard]] std::optional<dtype> wanted(Op op, std::uint32_t slot) const {
    return wanted_in(find(op), slot);
  }

  [[nodiscard]] std::size_t size() const noexcept { return slots_.size(); }
  [[nodiscard]] bool empty() const noexcept { return slots_.empty(); }
  // f(op, slots) for each entry, in name order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [op, index] : by_name_) f(std::string_view(op), slots_[index]);
  }

 private:
  std::vector<slots> slots_;                                 // in the order set
  std::map<std::string, std::size_t, std::less<>> by_name_;  // op -> its index in slots_
  std::unordered_map<std::uint32_t, std::size_t> by_id_;     // op_name id -> the same index
};

}  // namespace devpass
