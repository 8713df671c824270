// devpass/runtime/failing_allocator.hpp — a decorator for tests: forwards to the allocator it
// wraps, counts allocations, and makes the Nth allocation fail as a device out of memory would.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "devpass/runtime/allocator_decorator.hpp"

namespace devpass::runtime {

class failing_allocator final : public allocator_decorator {
 public:
  // fail_at: 1-based index of the allocation that throws; 0 never fails.
  failing_allocator(std::unique_ptr<device_allocator> inner, std::uint64_t fail_at)
      : allocator_decorator(std::move(inner)), fail_at_(fail_at) {}

  [[nodiscard]] std::uint64_t allocations() const noexcept { return allocations_; }  // attempts, failed included
  [[nodiscard]] std::uint64_t live() const noexcept { return live_; }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    if (++allocations_ == fail_at_)
      fail("allocate", node,
           "injected failure of allocation " + std::to_string(fail_at_) + " (" + std::to_string(bytes) + " bytes)");
    void* p = inner().allocate(bytes, alignment, node);
    ++live_;
    return p;
  }
  void do_deallocate(void* p) noexcept override {
    inner().deallocate(p);
    --live_;
  }

 private:
  std::uint64_t fail_at_;
  std::uint64_t allocations_ = 0;
  std::uint64_t live_ = 0;
};

}  // namespace devpass::runtime
