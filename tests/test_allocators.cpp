#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/failing_allocator.hpp"
#include "devpass/runtime/host_allocator.hpp"
#include "devpass/runtime/stream.hpp"

using namespace devpass;
using namespace devpass::runtime;

namespace {
std::vector<std::byte> iota_bytes(std::size_t n, unsigned start = 0) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(start + i);
  return v;
}
}  // namespace

TEST_CASE("allocators: host allocator aligns, gives distinct memory for 0 bytes, and counts live blocks") {
  host_allocator host;
  void* a = host.allocate(100, 256);
  void* b = host.allocate(0, 16);
  void* c = host.allocate(0, 16);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 256 == 0);
  CHECK(b != nullptr);
  CHECK(b != c);
  CHECK(host.live_allocations() == 3);
  host.deallocate(a);
  host.deallocate(b);
  host.deallocate(c);
  host.deallocate(nullptr);
  CHECK(host.live_allocations() == 0);
  CHECK(host.device() == cpu_device);
  CHECK_FALSE(host.emulated());
}

TEST_CASE("allocators: an alignment that is not a power of two names the op and device") {
  emulated_device_allocator dev(cuda_device(1));
  CHECK_THROWS_WITH_AS((void)dev.allocate(8, 24, "n1"),
                       "node 'n1': allocate on cuda:1: alignment 24 is not a power of two", device_error);
  CHECK(dev.live_allocations() == 0);
}

TEST_CASE("allocators: emulated device round-trips bytes through its own arena") {
  emulated_device_allocator dev(cuda_device(0));
  CHECK(dev.emulated());
  CHECK(dev.device() == cuda_device(0));
  device_buffer buffer(dev, 64, 256);
  CHECK(reinterpret_cast<std::uintptr_t>(buffer.data()) % 256 == 0);
  CHECK(dev.owns(buffer.data(), 64));
  CHECK(dev.owns(buffer.bytes() + 60, 4));
  CHECK_FALSE(dev.owns(buffer.bytes() + 60, 5));
  const auto source = iota_bytes(64, 7);
  dev.copy_host_to_device(buffer.data(), source.data(), 64);
  std::vector<std::byte> back(64);
  dev.copy_device_to_host(back.data(), buffer.data(), 64);
  CHECK(back == source);
  CHECK_FALSE(dev.owns(source.data(), 1));
}

TEST_CASE("allocators: emulated device catches copies through foreign pointers") {
  emulated_device_allocator dev(cuda_device(0));
  device_buffer buffer(dev, 32);
  std::vector<std::byte> host(32);
  SUBCASE("device to host from host memory") {
    CHECK_THROWS_WITH_AS(dev.copy_device_to_host(host.data(), host.data(), 32, "c"),
                         "node 'c': copy_device_to_host on cuda:0: source is not memory of this device", device_error);
  }
  SUBCASE("host to device into host memory") {
    CHECK_THROWS_WITH_AS(dev.copy_host_to_device(host.data(), host.data(), 32, "c"),
                         "node 'c': copy_host_to_device on cuda:0: destination is not memory of this device",
                         device_error);
  }
  SUBCASE("host to device from device memory (a missing d2h)") {
    device_buffer other(dev, 32);
    CHECK_THROWS_WITH_AS(dev.copy_host_to_device(buffer.data(), other.data(), 32, "c"),
                         "node 'c': copy_host_to_device on cuda:0: source is memory of this device, not host memory",
                         device_error);
  }
  SUBCASE("past the end of a block") {
    CHECK_THROWS_AS(dev.copy_device_to_host(host.data(), buffer.data(), 33), device_error);
  }
  SUBCASE("device to device from another device's memory") {
    emulated_device_allocator other(cuda_device(1));
    CHECK_THROWS_WITH_AS(dev.copy_device_to_device(buffer.data(), other, host.data(), 32, "c"),
                         "node 'c': copy_device_to_device on cuda:0: source is not memory of cuda:1", device_error);
  }
}

TEST_CASE("allocators: device to device between two emulated devices and within one") {
  emulated_device_allocator d0(cuda_device(0)), d1(cuda_device(1));
  device_buffer a(d0, 16), b(d1, 16), c(d1, 16);
  const auto source = iota_bytes(16, 100);
  d0.copy_host_to_device(a.data(), source.data(), 16);
  d1.copy_device_to_device(b.data(), d0, a.data(), 16);
  d1.copy_device_to_device(c.data(), d1, b.data(), 16);
  std::vector<std::byte> back(16);
  d1.copy_device_to_host(back.data(), c.data(), 16);
  CHECK(back == source);
}

TEST_CASE("allocators: a caller's stream bound to an emulated device is its native stream and tags its work") {
  allocator_registry registry;
  registry.add(std::make_unique<host_allocator>());
  auto& d0 = dynamic_cast<emulated_device_allocator&>(
      registry.add(std::make_unique<emulated_device_allocator>(cuda_device(0))));
  auto& cached =
      registry.add(std::make_unique<failing_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(1)), 0));
  d0.record_issues(true);
  device_buffer a(d0, 16);
  const auto source = iota_bytes(16);
  int token = 0, other = 0;
  d0.copy_host_to_device(a.data(), source.data(), 16, "before");
  {
    const device_stream streams[] = {{cuda_device(0), &token}, {cuda_device(1), &other}};
    const stream_binding bound(registry, streams);
    CHECK(d0.native_stream() == &token);
    CHECK(cached.native_stream() == &other);  // decorators forward the binding
    d0.copy_host_to_device(a.data(), source.data(), 16, "during");
    d0.synchronize();
  }
  CHECK(d0.native_stream() == nullptr);
  CHECK(cached.native_stream() == nullptr);
  REQUIRE(d0.issued().size() == 3);
  CHECK(d0.issued()[0].stream == nullptr);
  CHECK(d0.issued()[1].node == "during");
  CHECK(d0.issued()[1].stream == &token);
  CHECK(d0.issued()[2].op == "synchronize");
  CHECK(d0.issued()[2].stream == &token);
  host_allocator host;
  CHECK_THROWS_WITH_AS((void)host.bind_stream(&token),
                       "bind_stream on cpu: this allocator has no stream to replace with the caller's", device_error);
}

TEST_CASE("allocators: device_buffer frees on destruction, reset and move-assignment, and moves ownership") {
  emulated_device_allocator dev(cuda_device(0));
  {
    device_buffer a(dev, 10);
    CHECK(dev.live_allocations() == 1);
    device_buffer b(std::move(a));
    CHECK_FALSE(a);
    CHECK(b);
    CHECK(b.size() == 10);
    CHECK(b.device() == cuda_device(0));
    CHECK(dev.live_allocations() == 1);
    device_buffer c(dev, 20);
    CHECK(dev.live_allocations() == 2);
    c = std::move(b);  // frees c's old block
    CHECK(dev.live_allocations() == 1);
    CHECK(c.size() == 10);
    device_buffer d(dev, 5);
    d.reset();
    CHECK_FALSE(d);
    CHECK(dev.live_allocations() == 1);
  }
  CHECK(dev.live_allocations() == 0);
}

TEST_CASE("allocators: registry finds by device and names a missing one") {
  allocator_registry registry;
  registry.add(std::make_unique<host_allocator>());
  device_allocator& d0 = registry.add(std::make_unique<emulated_device_allocator>(cuda_device(0)));
  CHECK(&registry.find(cuda_device(0)) == &d0);
  CHECK(registry.try_find(cuda_device(1)) == nullptr);
  CHECK(registry.devices() == std::vector<device>{cpu_device, cuda_device(0)});
  CHECK_THROWS_WITH_AS((void)registry.find(cuda_device(3)),
                       "find allocator on cuda:3: no allocator is registered for this device", device_error);
  CHECK_THROWS_WITH_AS(registry.add(std::make_unique<emulated_device_allocator>(cuda_device(0))),
                       "register allocator on cuda:0: the device already has an allocator", device_error);
}

TEST_CASE("allocators: failing_allocator fails exactly the Nth allocation and leaks nothing") {
  auto inner = std::make_unique<emulated_device_allocator>(cuda_device(0));
  emulated_device_allocator& raw = *inner;
  failing_allocator failing(std::move(inner), 3);
  {
    device_buffer a(failing, 8), b(failing, 8);
    CHECK(failing.live() == 2);
    CHECK_THROWS_WITH_AS(device_buffer(failing, 1000, 64, "big"),
                         "node 'big': allocate on cuda:0: injected failure of allocation 3 (1000 bytes)", device_error);
    device_buffer c(failing, 8);  // the fourth succeeds again
    CHECK(failing.allocations() == 4);
    CHECK(raw.live_allocations() == 3);
    CHECK(&failing.underlying() == &raw);
    CHECK(failing.owns(c.data(), 8));
  }
  CHECK(failing.live() == 0);
  CHECK(raw.live_allocations() == 0);
}

TEST_CASE("allocators: default allocators emulate cuda devices when asked or when no GPU is usable") {
  const std::array<device, 3> wanted{cuda_device(1), cpu_device, cuda_device(0)};
  SUBCASE("forced emulation") {
    const default_allocators defaults = make_default_allocators(wanted, false);
    CHECK(defaults.emulated);
    CHECK(defaults.describe() == "devices: emulated (emulation requested)");
    CHECK(defaults.registry.devices() == std::vector<device>{cpu_device, cuda_device(0), cuda_device(1)});
    CHECK(defaults.registry.find(cuda_device(1)).emulated());
    CHECK_FALSE(defaults.registry.find(cpu_device).emulated());
  }
  SUBCASE("automatic") {
    const default_allocators defaults = make_default_allocators(wanted);
#if defined(DEVPASS_HAS_CUDA)
    const bool two_gpus = cuda::usable_device_count() >= 2;
    CHECK(defaults.emulated == !two_gpus);
    if (cuda::usable_device_count() == 0) CHECK(defaults.reason == cuda::unavailable_reason());
#else
    CHECK(defaults.describe() == "devices: emulated (built without CUDA)");
#endif
    CHECK(defaults.registry.devices().size() == 3);
  }
}
