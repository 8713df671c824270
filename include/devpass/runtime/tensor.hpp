// devpass/runtime/tensor.hpp — a tensor that owns its bytes on a device, and the moves of bytes
// between the host and a device's memory: read a tensor back, write host bytes, fill with
// fill_deterministic's values, make a deterministic tensor on a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/deterministic.hpp"

namespace devpass::runtime {

// A tensor that owns its memory: a spec and one buffer on the device the buffer's allocator serves.
struct tensor {
  tensor_spec spec{};
  device_buffer buffer{};
  [[nodiscard]] devpass::device device() const noexcept { return buffer.device(); }
};

[[nodiscard]] inline std::vector<std::byte> read_to_host(const tensor& t) {
  std::vector<std::byte> bytes(t.spec.byte_size());
  if (bytes.empty()) return bytes;
  device_allocator& a = *t.buffer.allocator();
  if (a.device().is_host())
    std::memcpy(bytes.data(), t.buffer.data(), bytes.size());
  else
    a.copy_device_to_host(bytes.data(), t.buffer.data(), bytes.size());
  return bytes;
}

// Writes host bytes into memory of `a` and waits, so `host` may die on return.
inline void write_from_host(device_allocator& a, void* dst, std::span<const std::byte> host,
                            std::string_view node = {}) {
  if (host.empty()) return;
  if (a.device().is_host()) {
    std::memcpy(dst, host.data(), host.size());
    return;
  }
  a.copy_host_to_device(dst, host.data(), host.size(), node);
  a.synchronize();
}

// fill_deterministic's values in memory of `a` (directly where that memory is host memory).
inline void fill_on(device_allocator& a, void* dst, const tensor_spec& spec, std::uint64_t seed,
                    std::string_view name) {
  if (a.device().is_host() || a.underlying().emulated()) {
    fill_deterministic(dst, spec, seed, name);
    return;
  }
  std::vector<std::byte> host(spec.byte_size());
  fill_deterministic(host.data(), spec, seed, name);
  write_from_host(a, dst, host, name);
}

// A tensor of `spec`'s layout on `where`, filled with fill_deterministic(seed, name).
[[nodiscard]] inline tensor make_deterministic_tensor(allocator_registry& allocators, const tensor_spec& spec,
                                                      devpass::device where, std::uint64_t seed,
                                                      std::string_view name) {
  device_allocator& a = allocators.find(where);
  tensor t{tensor_spec{spec.type, spec.shape, where, std::nullopt, std::nullopt},
           device_buffer(a, spec.byte_size(), 64, name)};
  fill_on(a, t.buffer.data(), t.spec, seed, name);
  return t;
}

}  // namespace devpass::runtime
