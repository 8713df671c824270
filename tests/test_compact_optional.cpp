// compact_optional (graph/compact_optional.hpp): an optional kept in the value's own bytes, as
// std::optional behaves where devpass uses it, and tensor_spec's three optional fields in it.
#include "devpass/graph/compact_optional.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>

#include "devpass/graph/tensor_spec.hpp"

using namespace devpass;

namespace {
using small_id = compact_optional<std::int32_t, -1>;
}

TEST_CASE("compact_optional: absent until given a value, as std::optional") {
  small_id id;
  CHECK_FALSE(id.has_value());
  CHECK_FALSE(static_cast<bool>(id));
  CHECK(id == std::nullopt);
  CHECK(id.value_or(7) == 7);
  CHECK_THROWS_AS((void)id.value(), std::bad_optional_access);
  CHECK(static_cast<std::optional<std::int32_t>>(id) == std::nullopt);

  id = 3;
  CHECK(id.has_value());
  CHECK(*id == 3);
  CHECK(id.value() == 3);
  CHECK(id.value_or(7) == 3);
  CHECK(id == 3);
  CHECK_FALSE(id == 4);
  CHECK_FALSE(id == std::nullopt);
  CHECK(static_cast<std::optional<std::int32_t>>(id) == 3);

  id.reset();
  CHECK(id == small_id{});
  id = std::optional<std::int32_t>{5};
  CHECK(id == std::optional<std::int32_t>{5});
  id = std::optional<std::int32_t>{};
  CHECK(id == std::optional<std::int32_t>{});
  id = 0;  // zero is a value, not absence
  CHECK(id.has_value());
  id = std::nullopt;
  CHECK_FALSE(id.has_value());
  static_assert(sizeof(small_id) == sizeof(std::int32_t));
}

TEST_CASE("tensor_spec: its device, buffer and offset are optional in their own bytes") {
  static_assert(sizeof(tensor_spec) == 64);
  tensor_spec spec{dtype::float16, {2, 3}};
  CHECK_FALSE(spec.device.has_value());
  CHECK_FALSE(spec.mem_id.has_value());
  CHECK_FALSE(spec.offset.has_value());
  spec.device = cuda_device(1);
  spec.mem_id = 0;
  spec.offset = 0;
  CHECK(spec.device == cuda_device(1));
  CHECK(spec.device->index == 1);
  CHECK(*spec.mem_id == 0);
  CHECK(*spec.offset == 0);
  spec.device = cpu_device;  // the host is a device, not absence
  CHECK(spec.device.has_value());
  CHECK(spec != tensor_spec{dtype::float16, {2, 3}});
  spec.device.reset();
  spec.mem_id.reset();
  spec.offset.reset();
  CHECK(spec == tensor_spec{dtype::float16, {2, 3}});
}
