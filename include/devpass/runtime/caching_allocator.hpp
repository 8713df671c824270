// devpass/runtime/caching_allocator.hpp — a decorator that keeps freed blocks and hands them out
// again instead of returning them to the allocator it wraps, as PyTorch's CUDA caching allocator
// does. cudaMalloc/cudaFree and cudaHostAlloc/cudaFreeHost cost hundreds of µs each (cudaFree
// also waits for the device), and the executor allocates its arenas and outputs on every call.
//
// Reuse rule: a request of B bytes is rounded up to R, a multiple of 512 (at least 512). It takes
// the smallest cached block of capacity C with R <= C <= 2R whose alignment is at least the
// requested one (among equal capacities, the one freed first). Else the inner allocator allocates
// R bytes aligned to max(alignment, 256): rounding makes blocks of near sizes interchangeable, and
// the 2R bound keeps a small request from pinning a huge block.
//
// Why a freed block may be handed out at once, without waiting for the device:
//  - device memory: each device has one stream that orders all its work (copies, kernels,
//    cross-device copies included, see allocator.hpp), so the new owner's work is queued after
//    every use the previous owner queued, and cannot overtake it. A caller's stream bound with
//    bind_stream (runtime/stream.hpp) breaks that single order: a block freed while work on one
//    stream still uses it may be handed to work on another, so a caller that binds streams
//    synchronizes the stream before freeing what ran on it (prepared_method keeps its arenas);
//  - host memory (pinned): the only asynchronous use of it is a copy_host_to_device that reads
//    it; the executor fences host writes while such copies are in flight (fence_host_writes in
//    executor.hpp) and synchronizes every device before execute() returns. A caller that frees
//    host memory while an asynchronous copy still reads it must synchronize that device first.
// If the inner allocator throws device_error (out of memory) while blocks are cached, they are all
// returned to it and the allocation is tried once more; that attempt's error is the one thrown.
//
// Everything else (device, emulated, owns, native_stream, underlying, copies, synchronize, bind_stream) is the
// inner allocator's; a pointer this allocator did not hand out is deallocated by the inner one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "devpass/runtime/allocator_decorator.hpp"

namespace devpass::runtime {

class caching_allocator final : public allocator_decorator {
 public:
  static constexpr std::uint64_t size_quantum = 512;       // capacities are multiples of this
  static constexpr std::uint32_t minimum_alignment = 256;  // what cudaMalloc gives anyway

  struct statistics {
    std::uint64_t hits = 0;           // allocations served from the cache
    std::uint64_t misses = 0;         // allocations that went to the inner allocator
    std::uint64_t cached_blocks = 0;  // free blocks held now
    std::uint64_t cached_bytes = 0;   // their capacity
  };

  explicit caching_allocator(std::unique_ptr<device_allocator> inner) : allocator_decorator(std::move(inner)) {}
  // Returns the cached blocks. Blocks still handed out belong to their owners, who must be gone
  // first (as for any allocator): the inner allocator dies with this one.
  ~caching_allocator() override { release_cached(); }

  // Returns every cached block to the inner allocator; the number of blocks returned.
  std::uint64_t release_cached() noexcept {
    const std::uint64_t released = free_.size();
    for (const auto& [capacity, b] : free_) inner().deallocate(b.data);
    free_.clear();
    cached_bytes_ = 0;
    return released;
  }

  [[nodiscard]] statistics stats() const noexcept { return {hits_, misses_, free_.size(), cached_bytes_}; }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    if (bytes > std::numeric_limits<std::uint64_t>::max() - (size_quantum - 1))
      fail("allocate", node, std::to_string(bytes) + " bytes do not fit in memory");
    const std::uint64_t capacity = std::max((bytes + size_quantum - 1) / size_quantum * size_quantum, size_quantum);
    if (void* p = take_cached(capacity, alignment)) {
      ++hits_;
      return p;
    }
    ++misses_;
    const std::uint32_t block_alignment = std::max(alignment, minimum_alignment);
    void* p = nullptr;
    try {
      p = inner().allocate(capacity, block_alignment, node);
    } catch (const device_error&) {
      if (release_cached() == 0) throw;  // nothing to give back: a retry would fail the same way
      p = inner().allocate(capacity, block_alignment, node);
    }
    try {
      live_.emplace(p, block{p, capacity, block_alignment});
    } catch (...) {
      inner().deallocate(p);
      throw;
    }
    return p;
  }

  void do_deallocate(void* p) noexcept override {
    const auto it = live_.find(p);
    if (it == live_.end()) {  // not handed out here: the inner allocator decides, as before
      inner().deallocate(p);
      return;
    }
    const block b = it->second;
    live_.erase(it);
    try {
      free_.emplace(b.capacity, b);
      cached_bytes_ += b.capacity;
    } catch (...) {
      inner().deallocate(p);  // no memory to remember it: give it back instead
    }
  }

 private:
  struct block {
    void* data = nullptr;
    std::uint64_t capacity = 0;
    std::uint32_t alignment = 0;
  };

  // The smallest fitting cached block (see the reuse rule), moved to the live blocks; else null.
  void* take_cached(std::uint64_t capacity, std::uint32_t alignment) {
    for (auto it = free_.lower_bound(capacity); it != free_.end() && it->first - capacity <= capacity; ++it) {
      if (it->second.alignment < alignment) continue;
      const block b = it->second;
      live_.emplace(b.data, b);  // first, so a throw leaves the block cached
      free_.erase(it);
      cached_bytes_ -= b.capacity;
      return b.data;
    }
    return nullptr;
  }

  std::multimap<std::uint64_t, block> free_;  // capacity -> cached block; equal keys in freeing order
  std::unordered_map<void*, block> live_;     // handed out, by address
  std::uint64_t cached_bytes_ = 0;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

}  // namespace devpass::runtime
