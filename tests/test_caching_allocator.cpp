// caching_allocator.hpp: the reuse rule (size, 2x bound, alignment), release, the retry after an
// out-of-memory, forwarding to the inner allocator, and the executor running over it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/caching_allocator.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/executor.hpp"
#include "devpass/runtime/failing_allocator.hpp"
#include "devpass/runtime/host_allocator.hpp"

using namespace devpass;
using namespace devpass::runtime;

namespace {

using statistics = caching_allocator::statistics;

bool operator==(const statistics& a, const statistics& b) {
  return a.hits == b.hits && a.misses == b.misses && a.cached_blocks == b.cached_blocks &&
         a.cached_bytes == b.cached_bytes;
}

// A caching allocator over a failing_allocator over cuda:0 emulated; `inner` watches what reaches it.
struct over_failing {
  explicit over_failing(std::uint64_t fail_at = 0) {
    auto f = std::make_unique<failing_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(0)), fail_at);
    inner = f.get();
    cache = std::make_unique<caching_allocator>(std::move(f));
  }
  failing_allocator* inner = nullptr;
  std::unique_ptr<caching_allocator> cache;
};

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

namespace doctest {
template <>
struct StringMaker<statistics> {
  static String convert(const statistics& s) {
    return ("{hits " + std::to_string(s.hits) + ", misses " + std::to_string(s.misses) + ", cached_blocks " +
            std::to_string(s.cached_blocks) + ", cached_bytes " + std::to_string(s.cached_bytes) + "}")
        .c_str();
  }
};
}  // namespace doctest

TEST_CASE("caching allocator: a freed block is reused for a request of the same rounded size") {
  caching_allocator cache(std::make_unique<emulated_device_allocator>(cuda_device(0)));
  void* p = cache.allocate(1000, 64);
  CHECK(address(p) % 256 == 0);  // every block is aligned to at least 256
  CHECK(cache.stats() == statistics{0, 1, 0, 0});
  cache.deallocate(p);
  CHECK(cache.stats() == statistics{0, 1, 1, 1024});  // 1000 rounded up to a multiple of 512
  CHECK(cache.owns(p, 1024));                         // still the inner allocator's memory

  SUBCASE("same size") {
    void* q = cache.allocate(1000, 64);
    CHECK(q == p);
    CHECK(cache.stats() == statistics{1, 1, 0, 0});
    cache.deallocate(q);
  }
  SUBCASE("another size that rounds to the same capacity") {
    void* q = cache.allocate(513, 16);
    CHECK(q == p);
    CHECK(cache.stats() == statistics{1, 1, 0, 0});
    cache.deallocate(q);
  }
  SUBCASE("0 bytes take a 512-byte block, and a 1024-byte block is within twice that") {
    void* q = cache.allocate(0, 16);
    CHECK(q == p);
    CHECK(cache.stats() == statistics{1, 1, 0, 0});
    cache.deallocate(q);
  }
  CHECK(cache.stats().cached_blocks == 1);
}

TEST_CASE("caching allocator: a block is not reused for a request more than 2x smaller") {
  caching_allocator cache(std::make_unique<emulated_device_allocator>(cuda_device(0)));
  void* big = cache.allocate(4096, 64);
  cache.deallocate(big);

  void* small = cache.allocate(1536, 64);  // 4096 > 2 * 1536
  CHECK(small != big);
  CHECK(cache.stats() == statistics{0, 2, 1, 4096});
  cache.deallocate(small);

  void* half = cache.allocate(2047, 64);  // rounds to 2048: 4096 <= 2 * 2048 ...
  CHECK(half == big);                     // ... but the smaller 1536 block does not fit 2048
  CHECK(cache.stats() == statistics{1, 2, 1, 1536});
  cache.deallocate(half);
}

TEST_CASE("caching allocator: the smallest fitting block is taken") {
  caching_allocator cache(std::make_unique<emulated_device_allocator>(cuda_device(0)));
  void* large = cache.allocate(2048, 64);
  void* exact = cache.allocate(1024, 64);
  cache.deallocate(large);
  cache.deallocate(exact);
  void* first = cache.allocate(1024, 64);
  void* second = cache.allocate(1024, 64);
  CHECK(first == exact);
  CHECK(second == large);
  CHECK(cache.stats() == statistics{2, 2, 0, 0});
  cache.deallocate(first);
  cache.deallocate(second);
}

TEST_CASE("caching allocator: a block is not reused when the request's alignment is larger") {
  caching_allocator cache(std::make_unique<emulated_device_allocator>(cuda_device(0)));
  void* loose = cache.allocate(512, 64);  // aligned to 256
  cache.deallocate(loose);
  void* strict = cache.allocate(512, 1024);
  CHECK(strict != loose);
  CHECK(address(strict) % 1024 == 0);
  CHECK(cache.stats() == statistics{0, 2, 1, 512});
  cache.deallocate(strict);
  // Both are cached, `loose` freed first: a 1024-aligned request skips it, a 256-aligned one takes it.
  CHECK(cache.allocate(512, 1024) == strict);
  CHECK(cache.allocate(512, 256) == loose);
  CHECK(cache.stats() == statistics{2, 2, 0, 0});
  cache.deallocate(strict);
  cache.deallocate(loose);
}

TEST_CASE("caching allocator: release_cached returns the cached blocks to the inner allocator") {
  over_failing a;
  void* p = a.cache->allocate(100, 64);
  void* q = a.cache->allocate(5000, 64);
  void* r = a.cache->allocate(600, 64);
  a.cache->deallocate(p);
  a.cache->deallocate(q);
  CHECK(a.inner->live() == 3);
  CHECK(a.cache->stats() == statistics{0, 3, 2, 512 + 5120});
  CHECK(a.cache->release_cached() == 2);
  CHECK(a.inner->live() == 1);
  CHECK(a.cache->stats() == statistics{0, 3, 0, 0});
  CHECK(a.cache->release_cached() == 0);
  a.cache->deallocate(r);
  CHECK(a.inner->live() == 1);  // cached again
  a.cache->release_cached();
  CHECK(a.inner->live() == 0);
  CHECK(a.inner->allocations() == 3);
}

TEST_CASE("caching allocator: a pointer it did not hand out is deallocated by the inner allocator") {
  over_failing a;
  void* foreign = a.inner->allocate(64, 64);
  CHECK(a.inner->live() == 1);
  a.cache->deallocate(foreign);
  CHECK(a.inner->live() == 0);
  CHECK(a.cache->stats() == statistics{0, 0, 0, 0});
}

TEST_CASE("caching allocator: out of memory on the inner allocator releases the cache and retries once") {
  SUBCASE("the retry succeeds") {
    over_failing a(2);  // the inner allocator's second allocation fails, its third succeeds
    void* p = a.cache->allocate(1024, 64);
    a.cache->deallocate(p);
    CHECK(a.inner->live() == 1);
    void* q = a.cache->allocate(4096, 64);  // no cached block fits: allocation 2 fails, 3 succeeds
    CHECK(q != nullptr);
    CHECK(a.inner->allocations() == 3);
    CHECK(a.inner->live() == 1);  // the cached 1024-byte block went back first
    CHECK(a.cache->stats() == statistics{0, 2, 0, 0});
    a.cache->deallocate(q);
  }
  SUBCASE("with nothing cached the error is thrown without a retry") {
    over_failing a(1);
    CHECK_THROWS_WITH_AS((void)a.cache->allocate(100, 64, "n"),
                         "node 'n': allocate on cuda:0: injected failure of allocation 1 (512 bytes)", device_error);
    CHECK(a.inner->allocations() == 1);
    CHECK(a.cache->stats() == statistics{0, 1, 0, 0});
  }
  SUBCASE("when the retry fails too, its error is thrown") {
    // Outer failing allocator fails its 3rd attempt (the retry), the inner one its 2nd.
    auto twice = std::make_unique<failing_allocator>(
        std::make_unique<failing_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(0)), 2), 3);
    failing_allocator& outer = *twice;
    caching_allocator cache(std::move(twice));
    cache.deallocate(cache.allocate(1024, 64));
    CHECK_THROWS_WITH_AS((void)cache.allocate(4096, 64, "n"),
                         "node 'n': allocate on cuda:0: injected failure of allocation 3 (4096 bytes)", device_error);
    CHECK(outer.allocations() == 3);
    CHECK(outer.live() == 0);
    CHECK(cache.stats() == statistics{0, 2, 0, 0});
  }
}

TEST_CASE("caching allocator: device, ownership, underlying and copies are the inner allocator's") {
  auto emulated = std::make_unique<emulated_device_allocator>(cuda_device(0));
  emulated_device_allocator& inner = *emulated;
  caching_allocator cache(std::make_unique<failing_allocator>(std::move(emulated), 0));
  CHECK(&cache.underlying() == &inner);
  CHECK(cache.device() == cuda_device(0));
  CHECK(cache.emulated());
  CHECK(cache.native_stream() == nullptr);

  caching_allocator other(std::make_unique<emulated_device_allocator>(cuda_device(1)));
  device_buffer a(cache, 64), b(other, 64);
  CHECK(cache.owns(a.data(), 64));
  CHECK_FALSE(cache.owns(b.data(), 1));
  std::vector<std::byte> source(64), back(64);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<std::byte>(3 * i + 1);
  cache.copy_host_to_device(a.data(), source.data(), 64);
  other.copy_device_to_device(b.data(), cache, a.data(), 64);
  other.synchronize();
  other.copy_device_to_host(back.data(), b.data(), 64);
  CHECK(back == source);
  // The copy reaches the emulated device, whose own check still applies.
  CHECK_THROWS_WITH_AS(cache.copy_host_to_device(a.data(), a.data(), 64, "c"),
                       "node 'c': copy_host_to_device on cuda:0: source is memory of this device, not host memory",
                       device_error);
}

namespace {

const tensor_spec f4{dtype::float32, {4}};

tensor_spec on(device d) {
  tensor_spec s = f4;
  s.device = d;
  return s;
}

vertex add(graph& g, std::string id, op_kind op, device d, std::string kernel, std::vector<value_ref> ins,
           tensor_spec out) {
  node n;
  n.id = std::move(id);
  n.op = op;
  n.device = d;
  n.kernel = std::move(kernel);
  if (op != op_kind::output) n.outputs = {std::move(out)};
  const vertex v = add_node(g, std::move(n));
  for (std::uint32_t s = 0; s < ins.size(); ++s) connect(g, ins[s], v, s);
  return v;
}

// x (host) -> x@h2d -> add(x, w) on cuda:0 -> d0@d2h -> output; planned: a host arena (x, d0@d2h)
// and a cuda:0 arena (x@h2d, d0); w gets its own allocation; the output one of its own too.
graph placed_and_planned(memory_plan& plan) {
  graph g;
  const device c0 = cuda_device(0);
  const vertex x = add(g, "x", op_kind::input, cpu_device, "", {}, on(cpu_device));
  const vertex w = add(g, "w", op_kind::constant, c0, "", {}, on(c0));
  const vertex xc = add(g, "x@h2d", op_kind::h2d_copy, c0, "", {{x, 0}}, on(c0));
  const vertex d0 = add(g, "d0", op_kind::delegate, c0, "add", {{xc, 0}, {w, 0}}, on(c0));
  const vertex dc = add(g, "d0@d2h", op_kind::d2h_copy, c0, "", {{d0, 0}}, on(cpu_device));
  add(g, "out", op_kind::output, cpu_device, "", {{dc, 0}}, {});
  const auto slot = [&](vertex v, std::int32_t mem_id, std::int64_t offset) {
    g[v].outputs[0].mem_id = mem_id;
    g[v].outputs[0].offset = offset;
  };
  slot(x, 1, 0);
  slot(dc, 1, 16);
  slot(xc, 2, 0);
  slot(d0, 2, 256);
  plan.order = topological_order(g);
  plan.buffers = {planned_buffer{}, planned_buffer{1, cpu_device, 32, 32, 16},
                  planned_buffer{2, cuda_device(0), 272, 32, 256}};
  return g;
}

kernel_registry add_kernel() {
  kernel_registry r;
  r.add("add", {[](const node&, std::span<const tensor_spec* const> in) {
                  return std::all_of(in.begin(), in.end(), [](const tensor_spec* s) { return s->same_layout(f4); });
                },
                [](const kernel_call& c) {
                  for (int i = 0; i < 4; ++i)
                    c.outputs[0].as<float>()[i] = c.inputs[0].as<float>()[i] + c.inputs[1].as<float>()[i];
                },
                nullptr});
  return r;
}

}  // namespace

TEST_CASE("caching allocator: the executor run twice gives the same outputs and allocates nothing new") {
  memory_plan plan;
  const graph g = placed_and_planned(plan);
  const kernel_registry kernels = add_kernel();
  allocator_registry allocators;
  auto& host = dynamic_cast<caching_allocator&>(
      allocators.add(std::make_unique<caching_allocator>(std::make_unique<host_allocator>())));
  auto& dev = dynamic_cast<caching_allocator&>(
      allocators.add(std::make_unique<caching_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(0)))));
  {
    const std::vector<tensor> inputs = make_method_inputs(g, allocators, 7);
    // The outputs are read and dropped, as a caller does before the next call.
    const auto run = [&] {
      const execution_result r = execute(g, plan, allocators, kernels, inputs, {7});
      REQUIRE(r.outputs.size() == 1);
      std::vector<float> values(4);
      std::memcpy(values.data(), read_to_host(r.outputs[0]).data(), 16);
      return values;
    };
    std::vector<float> expected(4), x(4), w(4);
    fill_deterministic(x.data(), f4, 7, "x");
    fill_deterministic(w.data(), f4, 7, "w");
    for (std::size_t i = 0; i < 4; ++i) expected[i] = x[i] + w[i];

    CHECK(run() == expected);
    // host: the input x, the arena, the output; cuda:0: the arena and w, both 512-byte blocks.
    CHECK(host.stats() == statistics{0, 3, 2, 1024});
    CHECK(dev.stats() == statistics{0, 2, 2, 1024});
    CHECK(run() == expected);
    CHECK(host.stats() == statistics{2, 3, 2, 1024});
    CHECK(dev.stats() == statistics{2, 2, 2, 1024});
  }
  CHECK(host.stats() == statistics{2, 3, 3, 1536});  // the input went back to the cache too
}

TEST_CASE("caching allocator: make_default_allocators caches real devices only") {
  const std::array<device, 2> wanted{cpu_device, cuda_device(0)};
  const auto is_cached = [](const default_allocators& d, device where) {
    return dynamic_cast<caching_allocator*>(&d.registry.find(where)) != nullptr;
  };
  SUBCASE("emulated devices and the plain host allocator stay unwrapped") {
    const default_allocators defaults = make_default_allocators(wanted, false, true);
    CHECK(defaults.emulated);
    CHECK_FALSE(is_cached(defaults, cpu_device));
    CHECK_FALSE(is_cached(defaults, cuda_device(0)));
  }
  SUBCASE("real devices are cached unless cache_allocations is false") {
    const default_allocators cached = make_default_allocators(wanted);
    CHECK(is_cached(cached, cpu_device) == !cached.emulated);
    CHECK(is_cached(cached, cuda_device(0)) == !cached.emulated);
    const default_allocators bare = make_default_allocators(wanted, true, false);
    CHECK_FALSE(is_cached(bare, cpu_device));
    CHECK_FALSE(is_cached(bare, cuda_device(0)));
  }
}
