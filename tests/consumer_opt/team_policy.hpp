// The team's compile-time policy: ExecuTorch's copies (the devpass sharing is not compiled in),
// elision compiled in.
#pragma once

#include <devpass/passes/propagate_device.hpp>

namespace team {
struct policy {
  static constexpr devpass::propagate_knobs knobs{.share_copies = false};
};
}  // namespace team
