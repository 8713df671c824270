// devpass/runtime/allocator_decorator.hpp — the base of allocators that wrap another one
// (caching_allocator, failing_allocator): everything is forwarded to the wrapped allocator, and
// a decorator overrides only what it changes (allocation, for both of ours). underlying() is
// the wrapped allocator's, so a device-to-device copy still recognises two allocators of the
// same kind through any number of decorators.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "devpass/runtime/allocator.hpp"

namespace devpass::runtime {

class allocator_decorator : public device_allocator {
 public:
  explicit allocator_decorator(std::unique_ptr<device_allocator> inner) : inner_(std::move(inner)) {}

  [[nodiscard]] devpass::device device() const noexcept override { return inner_->device(); }
  [[nodiscard]] bool emulated() const noexcept override { return inner_->emulated(); }
  [[nodiscard]] bool owns(const void* p, std::uint64_t bytes) const noexcept override { return inner_->owns(p, bytes); }
  [[nodiscard]] void* native_stream() const noexcept override { return inner_->native_stream(); }
  [[nodiscard]] device_allocator& underlying() noexcept override { return inner_->underlying(); }

 protected:
  [[nodiscard]] device_allocator& inner() noexcept { return *inner_; }

  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    return inner_->allocate(bytes, alignment, node);
  }
  void do_deallocate(void* p) noexcept override { inner_->deallocate(p); }
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
  void* do_bind_stream(void* stream) override { return inner_->bind_stream(stream); }

 private:
  std::unique_ptr<device_allocator> inner_;
};

}  // namespace devpass::runtime
