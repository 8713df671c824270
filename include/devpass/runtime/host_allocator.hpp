// devpass/runtime/host_allocator.hpp — allocators whose memory is host memory: host_allocator for
// the cpu, and emulated_device_allocator, which stands in for cuda:N where no GPU is usable.
//
// An emulated device is a separate host arena: its copies are memcpy, and it remembers every
// block it handed out, so a kernel or copy that reads host memory as if it were the device's
// (a missing h2d_copy) fails instead of silently working. A caller's stream bound to it is an
// opaque handle (it has no streams): with record_issues(true) it logs each copy and synchronize
// with the handle it was issued under, so a test can check which stream a run's work went to.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devpass/runtime/allocator.hpp"

namespace devpass::runtime {

namespace detail {
// The machine's physical memory in bytes (0 when unknown). A request above it cannot succeed:
// refusing it up front gives a clear error instead of an overcommitted mapping that the OOM
// killer ends later, or a sanitizer's abort on an impossible size.
[[nodiscard]] inline std::uint64_t host_memory_bytes() noexcept {
  static const std::uint64_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
  }();
  return bytes;
}

// aligned_alloc wants a size that is a multiple of the alignment, and at least one byte so that
// every allocation has its own address.
[[nodiscard]] inline void* aligned_host_alloc(const device_allocator& a, std::uint64_t bytes, std::uint32_t alignment,
                                              std::string_view node) {
  const std::uint64_t align = alignment < alignof(std::max_align_t) ? alignof(std::max_align_t) : alignment;
  const std::uint64_t rounded = (bytes == 0 ? 1 : bytes + align - 1) / align * align;
  if (rounded < bytes) a.fail("allocate", node, std::to_string(bytes) + " bytes do not fit in memory");
  if (const std::uint64_t memory = host_memory_bytes(); memory != 0 && rounded > memory)
    a.fail("allocate", node,
           std::to_string(bytes) + " bytes, more than the host's memory (" + std::to_string(memory) + " bytes)");
  void* p = std::aligned_alloc(static_cast<std::size_t>(align), static_cast<std::size_t>(rounded));
  if (p == nullptr) a.fail("allocate", node, "out of memory (" + std::to_string(bytes) + " bytes)");
  return p;
}

// Whether [p, p + bytes) lies inside one block of `blocks` (start address -> size): how an
// allocator that remembers its blocks tells its own memory from anyone else's.
[[nodiscard]] inline bool within_blocks(const std::map<std::uintptr_t, std::uint64_t>& blocks, const void* p,
                                        std::uint64_t bytes) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = blocks.upper_bound(address);
  if (it == blocks.begin()) return false;
  --it;
  return address - it->first <= it->second && bytes <= it->second - (address - it->first);
}
}  // namespace detail

// What every allocator of the cpu's own memory shares (this one, and the CUDA part's pinned host
// allocator): it is the host, and its "copies" are memmoves; a device-to-device copy into it
// from a real device is that device's device-to-host copy.
class host_memory_allocator : public device_allocator {
 public:
  [[nodiscard]] devpass::device device() const noexcept override { return cpu_device; }
  [[nodiscard]] bool emulated() const noexcept override { return false; }
  [[nodiscard]] bool owns(const void*, std::uint64_t) const noexcept override { return true; }

 protected:
  void do_copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view) override {
    std::memmove(dst, src, bytes);
  }
  void do_copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view) override {
    std::memmove(dst, src, bytes);
  }
  void do_copy_device_to_device(void* dst, device_allocator& source, const void* src, std::uint64_t bytes,
                                std::string_view node) override {
    if (source.underlying().emulated() || source.device().is_host())
      std::memmove(dst, src, bytes);
    else
      source.copy_device_to_host(dst, src, bytes, node);
  }
};

class host_allocator final : public host_memory_allocator {
 public:
  [[nodiscard]] std::size_t live_allocations() const noexcept { return live_; }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    void* p = detail::aligned_host_alloc(*this, bytes, alignment, node);
    ++live_;
    return p;
  }
  void do_deallocate(void* p) noexcept override {
    std::free(p);
    --live_;
  }

 private:
  std::size_t live_ = 0;
};

// One piece of work an emulated device was asked to do, and the stream handle it was issued on.
struct issued_work {
  std::string op;  // "copy_host_to_device", "copy_device_to_host", "copy_device_to_device", "synchronize"
  std::string node;
  void* stream = nullptr;  // the bound caller's handle, null for the device's own stream
};

class emulated_device_allocator final : public device_allocator {
 public:
  explicit emulated_device_allocator(devpass::device where) : device_(where) {}
  ~emulated_device_allocator() override {
    for (const auto& [address, size] : blocks_) std::free(reinterpret_cast<void*>(address));
  }

  [[nodiscard]] devpass::device device() const noexcept override { return device_; }
  [[nodiscard]] bool emulated() const noexcept override { return true; }
  [[nodiscard]] bool owns(const void* p, std::uint64_t bytes) const noexcept override {
    return detail::within_blocks(blocks_, p, bytes);
  }
  [[nodiscard]] std::size_t live_allocations() const noexcept { return blocks_.size(); }
  [[nodiscard]] void* native_stream() const noexcept override { return bound_; }
  // Off by default, so long runs do not grow a log nobody reads.
  void record_issues(bool on) { recording_ = on; }
  [[nodiscard]] const std::vector<issued_work>& issued() const noexcept { return issued_; }
  void clear_issued() noexcept { issued_.clear(); }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    void* p = detail::aligned_host_alloc(*this, bytes, alignment, node);
    try {
      blocks_.emplace(reinterpret_cast<std::uintptr_t>(p), bytes);
    } catch (...) {
      std::free(p);
      throw;
    }
    return p;
  }
  void do_deallocate(void* p) noexcept override {
    // A pointer this allocator did not hand out is left alone: freeing it would corrupt the heap.
    if (blocks_.erase(reinterpret_cast<std::uintptr_t>(p)) != 0) std::free(p);
  }
  void do_copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view node) override {
    if (owns(src, bytes)) fail("copy_host_to_device", node, "source is memory of this device, not host memory");
    note("copy_host_to_device", node);
    std::memcpy(dst, src, bytes);
  }
  void do_copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view node) override {
    if (owns(dst, 1)) fail("copy_device_to_host", node, "destination is memory of this device, not host memory");
    note("copy_device_to_host", node);
    std::memcpy(dst, src, bytes);
  }
  void do_copy_device_to_device(void* dst, device_allocator& source, const void* src, std::uint64_t bytes,
                                std::string_view node) override {
    note("copy_device_to_device", node);
    if (!source.underlying().emulated() && !source.device().is_host()) {
      device_allocator::do_copy_device_to_device(dst, source, src, bytes, node);
      return;
    }
    std::memmove(dst, src, bytes);  // both sides are host memory
  }
  void do_synchronize() override { note("synchronize", ""); }
  void* do_bind_stream(void* stream) override { return std::exchange(bound_, stream); }

 private:
  void note(std::string_view op, std::string_view node) {
    if (recording_) issued_.push_back({std::string(op), std::string(node), bound_});
  }

  devpass::device device_;
  void* bound_ = nullptr;
  bool recording_ = false;
  std::vector<issued_work> issued_;
  std::map<std::uintptr_t, std::uint64_t> blocks_;  // address -> requested bytes
};

}  // namespace devpass::runtime
