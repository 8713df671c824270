// devpass/runtime/constant_cache.hpp — constants (weights) made once on each device that holds
// them and reused by every run given the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/tensor.hpp"

namespace devpass::runtime {

// Constants (weights) materialised once and reused by every execution that is given the cache,
// as a runtime loads weights once rather than per call. Keyed by (constant id, device, seed): one
// entry per device a constant lives on, however it got there (filled there, or copied there once
// by a resident copy), so one cache can serve several methods; it must not outlive the allocators
// its tensors came from.
class constant_cache {
 public:
  // The constant's memory on `where`, filled from the seed the first time it is asked for.
  std::byte* get(device_allocator& allocator, const tensor_spec& spec, device where, std::uint64_t seed,
                 const std::string& id) {
    return get_or_load(allocator, spec, where, seed, id,
                       [&](std::byte* memory) { fill_on(allocator, memory, spec, seed, id); });
  }
  // The constant's memory on `where`, made the first time it is asked for by load(memory), which
  // writes it (a resident copy from where the constant lives already). Whether this call made it:
  // `*loaded`, when given.
  template <class Load>
  std::byte* get_or_load(device_allocator& allocator, const tensor_spec& spec, device where, std::uint64_t seed,
                         const std::string& id, Load&& load, bool* loaded = nullptr) {
    auto [it, fresh] = tensors_.try_emplace(key{id, where, seed});
    if (fresh) {
      try {
        it->second = tensor{spec, device_buffer(allocator, spec.byte_size(), 64, id)};
        std::forward<Load>(load)(it->second.buffer.bytes());
      } catch (...) {
        tensors_.erase(it);
        throw;
      }
    } else if (!it->second.spec.same_layout(spec)) {
      throw graph_error("", id, "outputs[0]", "the cached constant has another dtype or shape");
    }
    if (loaded != nullptr) *loaded = fresh;
    return it->second.buffer.bytes();
  }
  [[nodiscard]] std::size_t size() const noexcept { return tensors_.size(); }

 private:
  struct key {
    std::string id;
    device where;
    std::uint64_t seed;
    friend auto operator<=>(const key&, const key&) = default;
  };
  std::map<key, tensor> tensors_;
};

}  // namespace devpass::runtime
