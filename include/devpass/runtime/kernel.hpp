// devpass/runtime/kernel.hpp — the interface between the executor and the kernels it runs.
//
// A kernel is looked up by the node's `kernel` name. An entry says whether it fits a node (dtypes
// and shapes it supports) and gives a host implementation, and optionally a CUDA one. The
// executor runs the CUDA implementation for a delegate on a real CUDA device, the host one for
// host nodes and for emulated devices (whose memory is host memory), and the deterministic
// opaque kernel (runtime/opaque_kernel.hpp) for any node no entry fits.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "devpass/graph/graph.hpp"

namespace devpass::runtime {

// One tensor as a kernel sees it: where its bytes are and what they describe.
struct tensor_view {
  void* data = nullptr;
  const tensor_spec* spec = nullptr;
  [[nodiscard]] std::uint64_t bytes() const noexcept { return spec ? spec->byte_size() : 0; }
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(data);
  }
};

struct kernel_call {
  const node& op;                          // the node being run (its kernel name, attrs, device)
  std::span<const tensor_view> inputs{};   // by slot
  std::span<const tensor_view> outputs{};  // by output index, already allocated
  void* stream = nullptr;                  // cudaStream_t for CUDA implementations, else null
};

using kernel_fn = std::function<void(const kernel_call&)>;
using kernel_fits_fn = std::function<bool(const node&, std::span<const tensor_spec* const> inputs)>;

struct kernel_entry {
  kernel_fits_fn fits{};  // null means: fits every node
  kernel_fn host{};       // required
  kernel_fn cuda{};       // optional; without it a CUDA delegate's kernel runs on host copies
};

class kernel_registry {
 public:
  void add(std::string name, kernel_entry entry) { entries_.insert_or_assign(std::move(name), std::move(entry)); }
  // The entry for a node, if one is registered under its kernel name and fits it.
  [[nodiscard]] const kernel_entry* find(const node& n, std::span<const tensor_spec* const> inputs) const {
    const auto it = entries_.find(n.kernel);
    if (it == entries_.end()) return nullptr;
    if (it->second.fits && !it->second.fits(n, inputs)) return nullptr;
    return &it->second;
  }
  [[nodiscard]] bool contains(std::string_view name) const {
    return entries_.find(std::string(name)) != entries_.end();
  }

 private:
  std::map<std::string, kernel_entry, std::less<>> entries_;
};

}  // namespace devpass::runtime
