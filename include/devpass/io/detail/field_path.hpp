// devpass/io/detail/field_path.hpp — where in a node the reader found a problem.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace devpass::detail {

// Where in a node a problem is, rendered only when there is one ("outputs[0].shape[1]"), so the
// reader allocates nothing for paths on the good path.
struct field_path {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::string_view head;
  std::size_t index = none;
  std::string_view tail = {};
  std::size_t tail_index = none;

  [[nodiscard]] std::string str() const {
    std::string text(head);
    if (index != none) text += "[" + std::to_string(index) + "]";
    if (!tail.empty()) (text += '.') += tail;
    if (tail_index != none) text += "[" + std::to_string(tail_index) + "]";
    return text;
  }
};

}  // namespace devpass::detail
