// Every builtin kernel's CUDA implementation against its host implementation, on the same
// inputs (shapes with ragged tails and several blocks): the outputs must be bit-equal, the
// transcendental and reducing kernels included (portable_math.hpp). Skips cleanly without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "devpass/runtime/cuda/cuda_allocator.hpp"
#include "devpass/runtime/cuda/device_query.hpp"
#include "devpass/runtime/deterministic.hpp"
#include "devpass/runtime/kernels/builtin.hpp"

using namespace devpass;
using namespace devpass::runtime;

namespace {

struct kernel_case {
  std::string kernel{};
  std::string attrs{};
  std::vector<tensor_spec> inputs{};
  std::vector<tensor_spec> outputs{};
  std::vector<std::vector<std::int64_t>> int_inputs{};  // by slot, for int64 inputs (ids, positions)
  float input_scale = 1;                                // float inputs are in [-scale, scale)
};

tensor_spec f32(std::vector<std::int64_t> shape) { return {dtype::float32, std::move(shape)}; }
tensor_spec i64(std::vector<std::int64_t> shape) { return {dtype::int64, std::move(shape)}; }

std::vector<std::int64_t> in_range(std::size_t n, std::int64_t below, std::int64_t step = 7) {
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = (static_cast<std::int64_t>(i) * step + 3) % below;
  return v;
}

// Runs the host and the CUDA implementation on the same inputs; CHECKs that their outputs are equal.
void run_both(const kernel_case& k) {
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  node n{.id = "k_" + k.kernel,
         .op = op_kind::delegate,
         .device = cuda_device(0),
         .arity = static_cast<std::uint32_t>(k.inputs.size()),
         .kernel = k.kernel,
         .outputs = k.outputs,
         .attrs = k.attrs};
  std::vector<const tensor_spec*> in_specs;
  for (const tensor_spec& s : k.inputs) in_specs.push_back(&s);
  const kernel_entry* entry = kernels.find(n, in_specs);
  REQUIRE_MESSAGE(entry != nullptr, "the registry entry does not fit the case");
  REQUIRE_MESSAGE(static_cast<bool>(entry->cuda), "no CUDA implementation");

  // Host inputs: floats from the deterministic filler, integers as given.
  std::vector<std::vector<std::byte>> host_in(k.inputs.size());
  for (std::size_t i = 0; i < k.inputs.size(); ++i) {
    host_in[i].resize(k.inputs[i].byte_size());
    if (k.inputs[i].type == dtype::int64) {
      REQUIRE(i < k.int_inputs.size());
      REQUIRE(k.int_inputs[i].size() * 8 == host_in[i].size());
      std::memcpy(host_in[i].data(), k.int_inputs[i].data(), host_in[i].size());
    } else {
      fill_deterministic(host_in[i].data(), k.inputs[i], 11, n.id + std::to_string(i));
      auto* values = reinterpret_cast<float*>(host_in[i].data());
      for (std::size_t e = 0; e < host_in[i].size() / 4; ++e) values[e] *= k.input_scale;
    }
  }
  std::vector<std::vector<std::byte>> host_out(k.outputs.size()), gpu_out(k.outputs.size());
  std::vector<tensor_view> hin, hout;
  for (std::size_t i = 0; i < k.inputs.size(); ++i) hin.push_back({host_in[i].data(), &k.inputs[i]});
  for (std::size_t i = 0; i < k.outputs.size(); ++i) {
    host_out[i].assign(k.outputs[i].byte_size(), std::byte{0x5a});
    gpu_out[i].assign(k.outputs[i].byte_size(), std::byte{0});
    hout.push_back({host_out[i].data(), &k.outputs[i]});
  }
  entry->host(kernel_call{n, hin, hout, nullptr});

  auto dev = cuda::make_cuda_allocator(cuda_device(0));
  std::vector<device_buffer> din_buffers, dout_buffers;
  std::vector<tensor_view> din, dout;
  for (std::size_t i = 0; i < k.inputs.size(); ++i) {
    din_buffers.emplace_back(*dev, std::max<std::uint64_t>(k.inputs[i].byte_size(), 1), 256);
    dev->copy_host_to_device(din_buffers.back().data(), host_in[i].data(), host_in[i].size());
    din.push_back({din_buffers.back().data(), &k.inputs[i]});
  }
  for (std::size_t i = 0; i < k.outputs.size(); ++i) {
    dout_buffers.emplace_back(*dev, std::max<std::uint64_t>(k.outputs[i].byte_size(), 1), 256);
    dout.push_back({dout_buffers.back().data(), &k.outputs[i]});
  }
  entry->cuda(kernel_call{n, din, dout, dev->native_stream()});
  for (std::size_t i = 0; i < k.outputs.size(); ++i)
    dev->copy_device_to_host(gpu_out[i].data(), dout_buffers[i].data(), gpu_out[i].size());
  dev->synchronize();

  for (std::size_t o = 0; o < k.outputs.size(); ++o) {
    CAPTURE(o);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < gpu_out[o].size(); ++i) differing += gpu_out[o][i] != host_out[o][i];
    CHECK_MESSAGE(differing == 0, k.kernel << ": " << differing << " of " << gpu_out[o].size() << " bytes differ");
  }
}

bool no_gpu() {
  if (cuda::usable_device_count() > 0) return false;
  MESSAGE("skipped: no usable CUDA device (" << cuda::unavailable_reason() << ")");
  return true;
}

}  // namespace

TEST_CASE("cuda kernels: elementwise, matmul, embedding, arange and argmax equal the host bit for bit") {
  if (no_gpu()) return;
  for (const char* op : {"add", "mul"}) {
    CAPTURE(op);
    run_both({op, "", {f32({1000, 3}), f32({1000, 3})}, {f32({1000, 3})}});
  }
  run_both({"matmul", "", {f32({37, 19}), f32({19, 23})}, {f32({37, 23})}});
  run_both({"matmul", "", {f32({3, 37, 19}), f32({3, 19, 23})}, {f32({3, 37, 23})}});
  run_both({"matmul", "", {f32({1, 515}), f32({515, 77})}, {f32({1, 77})}});  // a decode row, ragged tile
  run_both({"embedding", "", {f32({50, 64}), i64({13})}, {f32({13, 64})}, {{}, in_range(13, 50)}});
  run_both({"arange", "", {i64({1})}, {i64({300})}, {{5}}});
  run_both({"argmax", "", {f32({9, 1000})}, {i64({9})}});
}

TEST_CASE("cuda kernels: transcendental and reducing kernels equal the host bit for bit") {
  if (no_gpu()) return;
  // Wide inputs: exp over/underflow, erf's |x| >= 4 branch.
  run_both({"silu", "", {f32({5000})}, {f32({5000})}, {}, 120});
  run_both({"gelu", "", {f32({5000})}, {f32({5000})}, {}, 12});
  run_both({"rms_norm", R"({"eps":1e-06})", {f32({7, 1000}), f32({1000})}, {f32({7, 1000})}});
  run_both({"softmax", "", {f32({5, 777})}, {f32({5, 777})}, {}, 30});
  run_both({"rotary",
            R"({"head_dim":16,"theta":10000.0})",
            {f32({6, 64}), i64({6})},
            {f32({6, 64})},
            {{}, {0, 1, 2, 9, 100, 65535}}});
  run_both({"attention",
            R"({"head_dim":8})",
            {f32({3, 32}), f32({3, 32}), f32({3, 32}), f32({2, 16, 32}), i64({3})},
            {f32({3, 32}), f32({2, 16, 32})},
            {{}, {}, {}, {}, {4, 5, 6}}});
  run_both({"attention",
            R"({"head_dim":8})",  // more cache rows than reduction lanes
            {f32({2, 32}), f32({2, 32}), f32({2, 32}), f32({2, 512, 32}), i64({2})},
            {f32({2, 32}), f32({2, 512, 32})},
            {{}, {}, {}, {}, {300, 511}},
            4});
  run_both({"top_k_routing", R"({"k":2})", {f32({10, 8})}, {i64({10, 2}), f32({10, 2})}});
  run_both({"moe_experts",
            "",
            {f32({4, 32}), i64({4, 2}), f32({4, 2}), f32({8, 32, 48}), f32({8, 32, 48}), f32({8, 48, 32})},
            {f32({4, 32})},
            {{}, in_range(8, 8, 3)}});
  run_both({"moe_experts",
            "",  // one decode token, dimensions off the 32-wide tiles
            {f32({1, 70}), i64({1, 2}), f32({1, 2}), f32({4, 70, 50}), f32({4, 70, 50}), f32({4, 50, 70})},
            {f32({1, 70})},
            {{}, {3, 1}}});
}
