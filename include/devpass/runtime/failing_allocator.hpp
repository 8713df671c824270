// devpass/runtime/failing_allocator.hpp — a decorator for tests: forwards to the allocator it
// wraps, counts allocations, and makes the Nth allocation fail as a device out of memory would.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "devpass/runtime/allocator.hpp"

namespace devpass::runtime {

class failing_allocator final : public device_allocator {
 public:
  // fail_at: 1-based index of the allocation that throws; 0 never fails.
  failing_allocator(std::unique_ptr<device_allocator> inner, std::uint64_t fail_at)
      : inner_(std::move(inner)), fail_at_(fail_at) {}

  [[nodiscard]] devpass::device device() const noexcept override { return inner_->device(); }
  [[nodiscard]] bool emulated() const noexcept override { return inner_->emulated(); }
  [[nodiscard]] bool owns(const void* p, std::uint64_t bytes) const noexcept override { return inner_->owns(p, bytes); }
  [[nodiscard]] void* native_stream() const noexcept override { return inner_->native_stream(); }
  [[nodiscard]] device_allocator& underlying() noexcept override { return inner_->underlying(); }

  [[nodiscard]] std::uint64_t allocations() const noexcept { return allocations_; }  // attempts, failed included
  [[nodiscard]] std::uint64_t live() const noexcept { return live_; }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    if (++allocations_ == fail_at_)
      fail("allocate", node, "injected failure of allocation " + std::to_string(fail_at_) + " (" +
                                 std::to_string(bytes) + " bytes)");
    void* p = inner_->allocate(bytes, alignment, node);
    ++live_;
    return p;
  }
  void do_deallocate(void* p) noexcept override {
    inner_->deallocate(p);
    --live_;
  }
  void do_copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view node) override {
    inner_->copy_host_to_device(dst, src, bytes, node);
  }
  void do_copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view node) override {
    inner_->copy_device_to_host(dst, src, bytes, node);
  }
  void do_copy_device_to_device(void* dst, device_allocator& source, const void* src, std::uint64_t bytes,
                                std::string_view node) override {
    inner_->copy_device_to_device(dst, source, src, bytes, node);
  }
  void do_synchronize() override { inner_->synchronize(); }

 private:
  std::unique_ptr<device_allocator> inner_;
  std::uint64_t fail_at_;
  std::uint64_t allocations_ = 0;
  std::uint64_t live_ = 0;
};

}  // namespace devpass::runtime
