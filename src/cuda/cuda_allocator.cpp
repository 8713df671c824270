// The CUDA allocators (see include/devpass/runtime/cuda/cuda_allocator.hpp for the contract).
// Built with the host compiler against the CUDA runtime API; no Boost, Hana or doctest here.
#include "devpass/runtime/cuda/cuda_allocator.hpp"
#include "devpass/runtime/host_allocator.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace devpass::cuda {
namespace {

using runtime::device_allocator;
using runtime::device_error;
using runtime::host_memory_allocator;

// Pageable host memory goes through two pinned chunks of this size, so the memcpy into one
// overlaps the DMA out of the other.
constexpr std::uint64_t staging_chunk = std::uint64_t{8} << 20;

[[noreturn]] void throw_cuda(std::string_view op, std::string_view node, device where, cudaError_t status) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw device_error(std::string(op), std::string(node), where,
                     std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
}

void check(cudaError_t status, std::string_view op, std::string_view node, device where) {
  if (status != cudaSuccess) throw_cuda(op, node, where, status);
}

// Makes `index` the current device for the scope, restoring the previous one after.
class device_scope {
 public:
  device_scope(device where, std::string_view node) {
    check(cudaGetDevice(&previous_), "cudaGetDevice", node, where);
    if (previous_ != where.index) check(cudaSetDevice(where.index), "cudaSetDevice", node, where);
  }
  ~device_scope() { (void)cudaSetDevice(previous_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

[[nodiscard]] bool is_pinned(const void* p) noexcept {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

class pinned_host_allocator final : public host_memory_allocator {
 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    if (alignment > 4096) fail("cudaHostAlloc", node, "alignment " + std::to_string(alignment) + " above a page");
    void* p = nullptr;
    check(cudaHostAlloc(&p, std::max<std::uint64_t>(bytes, 1), cudaHostAllocPortable), "cudaHostAlloc", node,
          cpu_device);
    return p;
  }
  void do_deallocate(void* p) noexcept override { (void)cudaFreeHost(p); }
};

// Kernels take stream-ordered scratch (cudaMallocAsync: the MoE experts' hidden activations)
// from the device's default memory pool. By default the pool gives freed memory back to the
// system at every synchronisation, so the next call maps it again; keeping it makes the scratch
// of one call the next call's.
void keep_pool_memory(devpass::device where) {
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, where.index), "cudaDeviceGetDefaultMemPool", "", where);
  std::uint64_t keep_all = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), "cudaMemPoolSetAttribute", "",
        where);
}

class cuda_allocator final : public device_allocator {
 public:
  explicit cuda_allocator(devpass::device where) : device_(where) {
    if (where.is_host()) throw device_error("make_cuda_allocator", "", where, "not a CUDA device");
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", "", where);
    if (where.index >= count)
      throw device_error("make_cuda_allocator", "", where,
                         "the process sees " + std::to_string(count) + " CUDA devices");
    device_scope scope(where, "");
    try {
      check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", "", where);
      for (cudaEvent_t& e : staging_done_)
        check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags", "", where);
      check(cudaEventCreateWithFlags(&ordering_, cudaEventDisableTiming), "cudaEventCreateWithFlags", "", where);
      keep_pool_memory(where);
    } catch (...) {
      release();
      throw;
    }
  }
  ~cuda_allocator() override {
    (void)cudaSetDevice(device_.index);  // errors cannot leave a destructor; the process is ending them anyway
    (void)cudaStreamSynchronize(stream_);
    for (const auto& [address, bytes] : blocks_) (void)cudaFree(reinterpret_cast<void*>(address));
    release();
  }

  [[nodiscard]] devpass::device device() const noexcept override { return device_; }
  [[nodiscard]] bool emulated() const noexcept override { return false; }
  [[nodiscard]] bool owns(const void* p, std::uint64_t bytes) const noexcept override {
    return runtime::detail::within_blocks(blocks_, p, bytes);
  }
  [[nodiscard]] void* native_stream() const noexcept override { return stream(); }

  // The stream work is queued on: the caller's while one is bound, else the allocator's own.
  [[nodiscard]] cudaStream_t stream() const noexcept { return bound_ != nullptr ? bound_ : stream_; }
  [[nodiscard]] cudaEvent_t ordering_event() const noexcept { return ordering_; }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    // cudaMalloc aligns to at least 256 bytes.
    if (alignment > 256) fail("cudaMalloc", node, "alignment " + std::to_string(alignment) + " above 256");
    device_scope scope(device_, node);
    void* p = nullptr;
    check(cudaMalloc(&p, std::max<std::uint64_t>(bytes, 1)), "cudaMalloc", node, device_);
    try {
      blocks_.emplace(reinterpret_cast<std::uintptr_t>(p), bytes);
    } catch (...) {
      (void)cudaFree(p);
      throw;
    }
    return p;
  }
  void do_deallocate(void* p) noexcept override {
    if (blocks_.erase(reinterpret_cast<std::uintptr_t>(p)) == 0) return;
    (void)cudaSetDevice(device_.index);
    (void)cudaFree(p);  // waits for the work that still uses p
  }

  void do_copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view node) override {
    device_scope scope(device_, node);
    if (is_pinned(src)) {
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream()), "cudaMemcpyAsync h2d", node, device_);
      return;
    }
    // Pageable memory: a pinned chunk at a time, so `src` is free again when this returns. That
    // waits for the device, which a stream being captured into a CUDA graph cannot do.
    if (capturing(node))
      fail("cudaMemcpyAsync h2d", node, "a copy from pageable host memory cannot be captured into a CUDA graph");
    ensure_staging(node);
    for (std::uint64_t done = 0, i = 0; done < bytes; done += staging_chunk, ++i) {
      const std::uint64_t n = std::min(staging_chunk, bytes - done);
      const std::size_t b = i % 2;
      check(cudaEventSynchronize(staging_done_[b]), "cudaEventSynchronize", node, device_);
      std::memcpy(staging_[b], static_cast<const std::byte*>(src) + done, n);
      check(cudaMemcpyAsync(static_cast<std::byte*>(dst) + done, staging_[b], n, cudaMemcpyHostToDevice, stream()),
            "cudaMemcpyAsync h2d", node, device_);
      check(cudaEventRecord(staging_done_[b], stream()), "cudaEventRecord", node, device_);
    }
  }

  void do_copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view node) override {
    device_scope scope(device_, node);
    // Pinned or pageable, one cudaMemcpyAsync: for pageable memory the driver's own staging beat
    // ours (two pinned chunks, the memcpy out of one overlapping the DMA into the other) when
    // measured (bench_runtime's d2h_pageable_vs_raw; docs/performance.md, "Runtime"). The copy
    // has finished on return.
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream()), "cudaMemcpyAsync d2h", node, device_);
    // While a CUDA graph is captured nothing runs yet: whoever launches it waits for it instead.
    if (!capturing(node)) check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize", node, device_);
  }

  void do_copy_device_to_device(void* dst, device_allocator& source, const void* src, std::uint64_t bytes,
                                std::string_view node) override {
    auto* peer = dynamic_cast<cuda_allocator*>(&source.underlying());
    if (peer == nullptr) {  // host or emulated memory on the other side
      device_allocator::do_copy_device_to_device(dst, source, src, bytes, node);
      return;
    }
    device_scope scope(device_, node);
    if (peer == this) {
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream()), "cudaMemcpyAsync d2d", node, device_);
      return;
    }
    // After the work queued on the source device ...
    check(cudaEventRecord(peer->ordering_event(), peer->stream()), "cudaEventRecord", node, peer->device());
    check(cudaStreamWaitEvent(stream(), peer->ordering_event(), 0), "cudaStreamWaitEvent", node, device_);
    if (can_access_peer(peer->device(), node)) {
      check(cudaMemcpyPeerAsync(dst, device_.index, src, peer->device().index, bytes, stream()), "cudaMemcpyPeerAsync",
            node, device_);
    } else {
      ensure_staging(node);
      for (std::uint64_t done = 0, i = 0; done < bytes; done += staging_chunk, ++i) {
        const std::uint64_t n = std::min(staging_chunk, bytes - done);
        const std::size_t b = i % 2;
        check(cudaEventSynchronize(staging_done_[b]), "cudaEventSynchronize", node, device_);
        peer->copy_device_to_host(staging_[b], static_cast<const std::byte*>(src) + done, n, node);
        check(cudaMemcpyAsync(static_cast<std::byte*>(dst) + done, staging_[b], n, cudaMemcpyHostToDevice, stream()),
              "cudaMemcpyAsync h2d", node, device_);
        check(cudaEventRecord(staging_done_[b], stream()), "cudaEventRecord", node, device_);
      }
    }
    // ... and before the source device reuses the memory the copy reads.
    check(cudaEventRecord(ordering_, stream()), "cudaEventRecord", node, device_);
    check(cudaStreamWaitEvent(peer->stream(), ordering_, 0), "cudaStreamWaitEvent", node, peer->device());
  }

  void do_synchronize() override {
    device_scope scope(device_, "");
    check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize", "", device_);
  }
  void* do_bind_stream(void* caller) override { return std::exchange(bound_, static_cast<cudaStream_t>(caller)); }

 private:
  [[nodiscard]] bool capturing(std::string_view node) const {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream(), &status), "cudaStreamIsCapturing", node, device_);
    return status != cudaStreamCaptureStatusNone;
  }

  void ensure_staging(std::string_view node) {
    for (void*& s : staging_)
      if (s == nullptr) check(cudaHostAlloc(&s, staging_chunk, cudaHostAllocPortable), "cudaHostAlloc", node, device_);
  }

  [[nodiscard]] bool can_access_peer(devpass::device other, std::string_view node) {
    const auto it = peer_access_.find(other.index);
    if (it != peer_access_.end()) return it->second;
    int can = 0;
    check(cudaDeviceCanAccessPeer(&can, device_.index, other.index), "cudaDeviceCanAccessPeer", node, device_);
    if (can != 0) {
      const cudaError_t status = cudaDeviceEnablePeerAccess(other.index, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        check(status, "cudaDeviceEnablePeerAccess", node, device_);
    }
    peer_access_.emplace(other.index, can != 0);
    return can != 0;
  }

  void release() noexcept {
    for (void*& s : staging_)
      if (s != nullptr) (void)cudaFreeHost(std::exchange(s, nullptr));
    for (cudaEvent_t& e : staging_done_)
      if (e != nullptr) (void)cudaEventDestroy(std::exchange(e, nullptr));
    if (ordering_ != nullptr) (void)cudaEventDestroy(std::exchange(ordering_, nullptr));
    if (stream_ != nullptr) (void)cudaStreamDestroy(std::exchange(stream_, nullptr));
  }

  devpass::device device_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t bound_ = nullptr;  // the caller's stream (bind_stream), or null
  std::array<cudaEvent_t, 2> staging_done_{};
  cudaEvent_t ordering_ = nullptr;
  std::array<void*, 2> staging_{};
  std::map<std::uintptr_t, std::uint64_t> blocks_;  // address -> requested bytes
  std::map<int, bool> peer_access_;
};

}  // namespace

std::unique_ptr<runtime::device_allocator> make_cuda_allocator(devpass::device where) {
  return std::make_unique<cuda_allocator>(where);
}

std::unique_ptr<runtime::device_allocator> make_pinned_host_allocator() {
  return std::make_unique<pinned_host_allocator>();
}

}  // namespace devpass::cuda
