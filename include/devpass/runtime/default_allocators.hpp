// devpass/runtime/default_allocators.hpp — the allocators a run uses: the host allocator for the
// cpu; for cuda:N the CUDA allocator when devpass::cuda is linked (DEVPASS_HAS_CUDA) and the
// process sees enough GPUs, else an emulated device (a separate host arena). All CUDA devices of
// one run are of one kind, so a run is either "cuda" or "emulated" and says which in one line.
// On real GPUs the CUDA allocators and the pinned host allocator are wrapped in a
// caching_allocator (unless cache_allocations is false): cudaMalloc and cudaHostAlloc cost
// hundreds of µs per call. Emulated devices and the plain host allocator are not (malloc is cheap).
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <string>

#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/caching_allocator.hpp"
#include "devpass/runtime/host_allocator.hpp"
#if defined(DEVPASS_HAS_CUDA)
#include "devpass/runtime/cuda/cuda_allocator.hpp"
#include "devpass/runtime/cuda/device_query.hpp"
#endif

namespace devpass::runtime {

struct default_allocators {
  allocator_registry registry;
  bool emulated = true;  // the CUDA devices are host arenas (also true when the run needs none)
  std::string reason;    // why they are emulated; empty when they are real

  // "devices: cuda" or "devices: emulated (reason)".
  [[nodiscard]] std::string describe() const {
    return emulated ? "devices: emulated (" + reason + ")" : "devices: cuda";
  }
};

// Whether the CUDA devices in `devices` can run on real GPUs; the reason when not.
[[nodiscard]] inline std::string why_not_cuda(std::span<const device> devices) {
  int needed = 0;
  for (const device d : devices)
    if (!d.is_host()) needed = std::max(needed, d.index + 1);
#if defined(DEVPASS_HAS_CUDA)
  const int usable = cuda::usable_device_count();
  if (usable == 0) return cuda::unavailable_reason();
  if (usable < needed)
    return "the graph uses cuda:" + std::to_string(needed - 1) + ", " + std::to_string(usable) + " usable CUDA device" +
           (usable == 1 ? "" : "s");
  return {};
#else
  (void)needed;
  return "built without CUDA";
#endif
}

// Allocators for the cpu and every device in `devices` (duplicates and cpu are fine).
// `allow_cuda` = false forces emulation (host references, tests); `cache_allocations` = false
// gives real devices their bare allocators (to measure what the cache saves).
[[nodiscard]] inline default_allocators make_default_allocators(std::span<const device> devices, bool allow_cuda = true,
                                                                bool cache_allocations = true) {
  default_allocators result;
  result.reason = allow_cuda ? why_not_cuda(devices) : "emulation requested";
  result.emulated = !result.reason.empty();
#if defined(DEVPASS_HAS_CUDA)
  const auto cached = [cache_allocations](std::unique_ptr<device_allocator> a) -> std::unique_ptr<device_allocator> {
    if (!cache_allocations) return a;
    return std::make_unique<caching_allocator>(std::move(a));
  };
  if (!result.emulated) result.registry.add(cached(cuda::make_pinned_host_allocator()));
#else
  (void)cache_allocations;  // only real devices are cached
#endif
  if (result.emulated) result.registry.add(std::make_unique<host_allocator>());
  for (const device d : devices) {
    if (d.is_host() || result.registry.try_find(d) != nullptr) continue;
#if defined(DEVPASS_HAS_CUDA)
    if (!result.emulated) {
      result.registry.add(cached(cuda::make_cuda_allocator(d)));
      continue;
    }
#endif
    result.registry.add(std::make_unique<emulated_device_allocator>(d));
  }
  return result;
}

}  // namespace devpass::runtime
