// devpass/runtime/staged_kernel.hpp — a GPU node whose kernel has no CUDA implementation, run on
// host copies: its operands to the host, the host kernel (or the opaque one), the results back.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/opaque_kernel.hpp"

namespace devpass::runtime {

// `entry`: the registry's entry for `n`, or null for the opaque kernel. `in` and `out` are views
// of memory of `a`; waits for `a` before it returns.
inline void run_on_host_copies(const node& n, device_allocator& a, const kernel_entry* entry,
                               std::span<const tensor_view> in, std::span<const tensor_view> out) {
  std::vector<std::vector<std::byte>> host_in(in.size()), host_out(out.size());
  std::vector<tensor_view> hin(in.size()), hout(out.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    host_in[k].resize(in[k].bytes());
    a.copy_device_to_host(host_in[k].data(), in[k].data, in[k].bytes(), n.id);
    hin[k] = tensor_view{host_in[k].data(), in[k].spec};
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    host_out[k].resize(out[k].bytes());
    hout[k] = tensor_view{host_out[k].data(), out[k].spec};
  }
  if (entry)
    entry->host(kernel_call{n, hin, hout, nullptr});
  else
    run_opaque_kernel(n.kernel, hin, hout);
  for (std::size_t k = 0; k < out.size(); ++k)
    a.copy_host_to_device(out[k].data, host_out[k].data(), out[k].bytes(), n.id);
  a.synchronize();  // host_out dies on return
}

}  // namespace devpass::runtime
