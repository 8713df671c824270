// devpass/runtime/allocator.hpp — memory of one device: the device_allocator interface, its
// error type, and device_buffer, the RAII owner of one allocation (a planned arena or a value).
//
// Contract of every allocator (checked by tests/test_allocators.cpp for each implementation):
//  - allocate(bytes, alignment) returns memory aligned to `alignment` (a power of two), never
//    null, also for 0 bytes; failure throws device_error (op "allocate"), never returns null.
//  - copies are ordered on the device (one stream per device). copy_host_to_device may return
//    before the copy has finished; the host source must then stay unchanged until synchronize().
//    copy_device_to_host has finished when it returns. copy_device_to_device orders itself after
//    the work queued on both devices.
//  - every error names the op, the node (when the caller gave one) and the device.
//  - bind_stream(s): until bound again, the allocator queues its work on the caller's stream `s`
//    instead of its own (runtime/stream.hpp binds a run's streams); allocators of host memory
//    have no stream and refuse one.
// The public functions are non-virtual (they check arguments once); implementations override the
// do_* hooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devpass/graph/device.hpp"

namespace devpass::runtime {

// A failure of a device operation. what(): "node 'x@h2d': copy_host_to_device on cuda:0: detail",
// the node part omitted when unknown.
class device_error : public std::runtime_error {
 public:
  device_error(std::string op, std::string node, devpass::device where, std::string detail)
      : std::runtime_error(compose(op, node, where, detail)),
        op_(std::move(op)),
        node_(std::move(node)),
        device_(where),
        detail_(std::move(detail)) {}

  [[nodiscard]] const std::string& op() const noexcept { return op_; }
  [[nodiscard]] const std::string& node() const noexcept { return node_; }
  [[nodiscard]] devpass::device device() const noexcept { return device_; }
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  static std::string compose(const std::string& op, const std::string& node, devpass::device where,
                             const std::string& detail) {
    std::string m;
    if (!node.empty()) m += "node '" + node + "': ";
    return m + op + " on " + to_string(where) + ": " + detail;
  }
  std::string op_, node_;
  devpass::device device_;
  std::string detail_;
};

class device_allocator {
 public:
  device_allocator() = default;
  device_allocator(const device_allocator&) = delete;
  device_allocator& operator=(const device_allocator&) = delete;
  virtual ~device_allocator() = default;

  [[nodiscard]] virtual devpass::device device() const noexcept = 0;
  // True when the device's memory is host memory standing in for a device (no GPU usable).
  [[nodiscard]] virtual bool emulated() const noexcept = 0;
  // Whether [p, p + bytes) lies inside memory this allocator handed out. Host memory is
  // everywhere, so the host allocator answers true.
  [[nodiscard]] virtual bool owns(const void* p, std::uint64_t bytes) const noexcept = 0;
  // The cudaStream_t that orders this device's work, or null for host memory.
  [[nodiscard]] virtual void* native_stream() const noexcept { return nullptr; }
  // The allocator that does the work (decorators forward to the one they wrap), so that a
  // device-to-device copy can recognise two allocators of the same kind.
  [[nodiscard]] virtual device_allocator& underlying() noexcept { return *this; }

  [[nodiscard]] void* allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node = {}) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      fail("allocate", node, "alignment " + std::to_string(alignment) + " is not a power of two");
    return do_allocate(bytes, alignment, node);
  }
  void deallocate(void* p) noexcept {
    if (p != nullptr) do_deallocate(p);
  }
  void copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view node = {}) {
    if (bytes == 0) return;
    if (!owns(dst, bytes)) fail("copy_host_to_device", node, "destination is not memory of this device");
    do_copy_host_to_device(dst, src, bytes, node);
  }
  void copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view node = {}) {
    if (bytes == 0) return;
    if (!owns(src, bytes)) fail("copy_device_to_host", node, "source is not memory of this device");
    do_copy_device_to_host(dst, src, bytes, node);
  }
  // Copies `bytes` from `src`, memory of `source`, to `dst`, memory of this allocator.
  void copy_device_to_device(void* dst, device_allocator& source, const void* src, std::uint64_t bytes,
                             std::string_view node = {}) {
    if (bytes == 0) return;
    if (!owns(dst, bytes)) fail("copy_device_to_device", node, "destination is not memory of this device");
    if (!source.owns(src, bytes))
      fail("copy_device_to_device", node, "source is not memory of " + to_string(source.device()));
    do_copy_device_to_device(dst, source, src, bytes, node);
  }
  // Waits for everything queued on this device's stream (the bound one, when a caller bound one).
  void synchronize() { do_synchronize(); }
  // Queues this allocator's work on `stream` (a cudaStream_t of this device; on an emulated device
  // any opaque handle, never dereferenced) until bound again; null goes back to the allocator's
  // own stream. Returns the previous binding. native_stream() is the bound stream while bound.
  void* bind_stream(void* stream) { return do_bind_stream(stream); }

  [[noreturn]] void fail(std::string_view op, std::string_view node, std::string detail) const {
    throw device_error(std::string(op), std::string(node), device(), std::move(detail));
  }

 protected:
  virtual void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) = 0;
  virtual void do_deallocate(void* p) noexcept = 0;
  virtual void do_copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view node) = 0;
  virtual void do_copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view node) = 0;
  // Default: through a host buffer, which works between any two kinds of memory.
  virtual void do_copy_device_to_device(void* dst, device_allocator& source, const void* src, std::uint64_t bytes,
                                        std::string_view node) {
    std::vector<std::byte> staging(bytes);
    source.copy_device_to_host(staging.data(), src, bytes, node);
    do_copy_host_to_device(dst, staging.data(), bytes, node);
    do_synchronize();  // `staging` dies on return
  }
  virtual void do_synchronize() {}
  virtual void* do_bind_stream(void* stream) {
    if (stream != nullptr) fail("bind_stream", "", "this allocator has no stream to replace with the caller's");
    return nullptr;
  }
};

// Owns one allocation; frees it on every path. Move-only; the allocator must outlive it.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(device_allocator& allocator, std::uint64_t bytes, std::uint32_t alignment = 64,
                std::string_view node = {})
      : allocator_(&allocator), data_(allocator.allocate(bytes, alignment, node)), size_(bytes) {}
  device_buffer(device_buffer&& other) noexcept
      : allocator_(std::exchange(other.allocator_, nullptr)),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      reset();
      allocator_ = std::exchange(other.allocator_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~device_buffer() { reset(); }

  void reset() noexcept {
    if (allocator_ != nullptr) allocator_->deallocate(data_);
    allocator_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::byte* bytes() const noexcept { return static_cast<std::byte*>(data_); }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] device_allocator* allocator() const noexcept { return allocator_; }
  [[nodiscard]] devpass::device device() const noexcept { return allocator_ ? allocator_->device() : cpu_device; }
  [[nodiscard]] explicit operator bool() const noexcept { return allocator_ != nullptr; }

 private:
  device_allocator* allocator_ = nullptr;
  void* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace devpass::runtime
