// devpass/runtime/allocator_registry.hpp — which allocator serves which device.
// The registry owns its allocators; buffers allocated from them must die before it.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "devpass/runtime/allocator.hpp"

namespace devpass::runtime {

class allocator_registry {
 public:
  // Registers `allocator` for its device. A device has one allocator: a second one throws
  // (buffers of the first may still point into it).
  device_allocator& add(std::unique_ptr<device_allocator> allocator) {
    const devpass::device where = allocator->device();
    const auto [it, inserted] = allocators_.try_emplace(where, std::move(allocator));
    if (!inserted) throw device_error("register allocator", "", where, "the device already has an allocator");
    return *it->second;
  }
  [[nodiscard]] device_allocator* try_find(devpass::device where) const noexcept {
    const auto it = allocators_.find(where);
    return it == allocators_.end() ? nullptr : it->second.get();
  }
  [[nodiscard]] device_allocator& find(devpass::device where) const {
    if (device_allocator* a = try_find(where)) return *a;
    throw device_error("find allocator", "", where, "no allocator is registered for this device");
  }
  [[nodiscard]] std::vector<devpass::device> devices() const {
    std::vector<devpass::device> result;
    for (const auto& [where, allocator] : allocators_) result.push_back(where);
    return result;
  }

 private:
  std::map<devpass::device, std::unique_ptr<device_allocator>> allocators_;
};

}  // namespace devpass::runtime
