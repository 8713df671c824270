// devpass/graph/op_traits.hpp — what a model may declare about a node's op, for guards
// (`has_trait<op_trait::view>(x)`, pattern/value_guards.hpp): the op is a view of its first
// operand (aliases its memory), pure (no side effect: may be removed or duplicated), elementwise
// (each output element depends only on the same element of each operand), or has a device kernel
// (can run on an accelerator). A model declares them with
// `static op_traits traits(const G&, vertex)` (graph/node_description.hpp).
//
// devpass::graph declares them from its kernel names: aten_op_traits() below, a table of the
// ATen ops whose traits are known (an op it does not list has none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace devpass {

enum class op_trait : std::uint8_t { view = 1, pure = 2, elementwise = 4, device_kernel = 8 };

constexpr std::string_view to_string(op_trait t) {
  switch (t) {
    case op_trait::view: return "view";
    case op_trait::pure: return "pure";
    case op_trait::elementwise: return "elementwise";
    case op_trait::device_kernel: return "device_kernel";
  }
  return "?";
}

// A set of traits.
class op_traits {
 public:
  constexpr op_traits() noexcept = default;
  constexpr op_traits(op_trait t) noexcept : bits_(static_cast<std::uint8_t>(t)) {}  // NOLINT: implicit
  [[nodiscard]] constexpr bool has(op_trait t) const noexcept { return (bits_ & static_cast<std::uint8_t>(t)) != 0; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
  friend constexpr op_traits operator|(op_traits a, op_traits b) noexcept { return from_bits(a.bits_ | b.bits_); }
  friend constexpr op_traits operator|(op_trait a, op_traits b) noexcept { return op_traits(a) | b; }
  friend constexpr bool operator==(op_traits, op_traits) noexcept = default;

 private:
  static constexpr op_traits from_bits(unsigned bits) noexcept {
    op_traits t;
    t.bits_ = static_cast<std::uint8_t>(bits);
    return t;
  }
  std::uint8_t bits_ = 0;
};
constexpr op_traits operator|(op_trait a, op_trait b) noexcept { return op_traits(a) | op_traits(b); }

namespace detail {
struct named_traits {
  std::string_view op;
  op_traits traits;
};
// Sorted by name (checked below), looked up by binary search. Views alias their first operand;
// every op listed is pure; every ATen op here has a CUDA kernel.
inline constexpr op_traits aten_view = op_trait::view | op_trait::pure | op_trait::device_kernel;
inline constexpr op_traits aten_elementwise = op_trait::elementwise | op_trait::pure | op_trait::device_kernel;
inline constexpr op_traits aten_other = op_trait::pure | op_trait::device_kernel;
inline constexpr named_traits aten_traits_table[] = {
    named_traits{"aten._to_copy.default", aten_elementwise},
    named_traits{"aten._unsafe_view.default", aten_view},
    named_traits{"aten.add.Tensor", aten_elementwise},
    named_traits{"aten.addmm.default", aten_other},
    named_traits{"aten.alias.default", aten_view},
    named_traits{"aten.as_strided.default", aten_view},
    named_traits{"aten.bmm.default", aten_other},
    named_traits{"aten.clone.default", aten_elementwise},
    named_traits{"aten.convolution.default", aten_other},
    named_traits{"aten.div.Tensor", aten_elementwise},
    named_traits{"aten.exp.default", aten_elementwise},
    named_traits{"aten.expand.default", aten_view},
    named_traits{"aten.gelu.default", aten_elementwise},
    named_traits{"aten.linear.default", aten_other},
    named_traits{"aten.mm.default", aten_other},
    named_traits{"aten.mul.Tensor", aten_elementwise},
    named_traits{"aten.neg.default", aten_elementwise},
    named_traits{"aten.permute.default", aten_view},
    named_traits{"aten.relu.default", aten_elementwise},
    named_traits{"aten.reshape.default", aten_view},
    named_traits{"aten.select.int", aten_view},
    named_traits{"aten.sigmoid.default", aten_elementwise},
    named_traits{"aten.slice.Tensor", aten_view},
    named_traits{"aten.squeeze.dim", aten_view},
    named_traits{"aten.sub.Tensor", aten_elementwise},
    named_traits{"aten.t.default", aten_view},
    named_traits{"aten.tanh.default", aten_elementwise},
    named_traits{"aten.transpose.int", aten_view},
    named_traits{"aten.unsqueeze.default", aten_view},
    named_traits{"aten.view.default", aten_view},
};
// Plain loops, not <algorithm>'s ranges: this header is in every TU that includes the rules, and
// the ranges algorithms' instantiations cost more compile time than the lookups they would save.
constexpr bool sorted_by_name() {
  for (std::size_t i = 1; i < std::size(aten_traits_table); ++i)
    if (!(aten_traits_table[i - 1].op < aten_traits_table[i].op)) return false;
  return true;
}
static_assert(sorted_by_name(), "keep the table sorted by name, each name once");
}  // namespace detail

// The traits of an ATen op by its kernel name; none for a name the table does not list.
[[nodiscard]] constexpr op_traits aten_op_traits(std::string_view kernel) noexcept {
  std::size_t low = 0, high = std::size(detail::aten_traits_table);  // binary search in [low, high)
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    const std::string_view at = detail::aten_traits_table[mid].op;
    if (at == kernel) return detail::aten_traits_table[mid].traits;
    if (at < kernel)
      low = mid + 1;
    else
      high = mid;
  }
  return {};
}

}  // namespace devpass
