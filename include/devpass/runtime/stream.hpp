// devpass/runtime/stream.hpp — the caller's streams: which stream each device's work of a run
// goes to.
//
//   device_stream{cuda_device(0), my_stream}   // a cudaStream_t on a GPU; on an emulated device
//                                              // any non-null handle (recorded, never used)
//   stream_binding bound(allocators, streams);  // until `bound` dies, every copy and kernel of
//                                              // cuda:0 is issued on my_stream
//
// A run given a caller's stream for a device issues that device's copies and kernels on it (the
// allocator's bind_stream; kernels get it as kernel_call::stream) and waits on no device-wide
// state: it orders its work after what the caller queued on the stream, and the caller orders its
// own use of the results after the run's work the same way.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/device.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"

namespace devpass::runtime {

struct device_stream {
  devpass::device where;
  void* handle = nullptr;  // cudaStream_t on a real device; opaque on an emulated one
};

// The caller's stream for `d` among `streams`, or null.
[[nodiscard]] inline void* stream_for(std::span<const device_stream> streams, devpass::device d) noexcept {
  for (const device_stream& s : streams)
    if (s.where == d) return s.handle;
  return nullptr;
}

// Binds each stream to its device's allocator for the scope, restoring the previous binding after
// (in reverse order, on every path). A stream for the host, a null handle, or two streams for one
// device are refused: each names the device.
class stream_binding {
 public:
  stream_binding(const allocator_registry& allocators, std::span<const device_stream> streams) {
    try {
      for (const device_stream& s : streams) {
        if (s.where.is_host() || s.handle == nullptr)
          throw device_error("bind_stream", "", s.where,
                             s.handle == nullptr ? "the caller's stream is null" : "the host runs on no stream");
        for (const auto& [bound, previous] : bound_)
          if (bound->device() == s.where) throw device_error("bind_stream", "", s.where, "two streams for one device");
        device_allocator& a = allocators.find(s.where);
        bound_.emplace_back(&a, a.bind_stream(s.handle));
      }
    } catch (...) {
      restore();
      throw;
    }
  }
  stream_binding(const stream_binding&) = delete;
  stream_binding& operator=(const stream_binding&) = delete;
  ~stream_binding() { restore(); }

 private:
  void restore() noexcept {
    for (auto it = bound_.rbegin(); it != bound_.rend(); ++it) {
      try {
        (void)it->first->bind_stream(it->second);
      } catch (...) {  // restoring a null binding cannot fail; a non-null one was accepted before
      }
    }
    bound_.clear();
  }
  std::vector<std::pair<device_allocator*, void*>> bound_;  // allocator, its previous binding
};

}  // namespace devpass::runtime
