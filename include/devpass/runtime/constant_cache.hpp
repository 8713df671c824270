// devpass/runtime/constant_cache.hpp — constants (weights) filled once on their device and reused
// by every run given the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/tensor.hpp"

namespace devpass::runtime {

// Constants (weights) materialised once and reused by every execution that is given the cache,
// as a runtime loads weights once rather than per call. Keyed by (node id, device, seed), so one
// cache can serve several methods; it must not outlive the allocators its tensors came from.
class constant_cache {
 public:
  // The constant's memory on `where`, filled from the seed the first time it is asked for.
  std::byte* get(device_allocator& allocator, const tensor_spec& spec, device where, std::uint64_t seed,
                 const std::string& id) {
    auto [it, fresh] = tensors_.try_emplace(key{id, where, seed});
    if (fresh) {
      try {
        it->second = tensor{spec, device_buffer(allocator, spec.byte_size(), 64, id)};
        fill_on(allocator, it->second.buffer.bytes(), spec, seed, id);
      } catch (...) {
        tensors_.erase(it);
        throw;
      }
    } else if (!it->second.spec.same_layout(spec)) {
      throw graph_error("", id, "outputs[0]", "the cached constant has another dtype or shape");
    }
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
