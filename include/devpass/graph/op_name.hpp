// devpass/graph/op_name.hpp — op names interned: one 32-bit id per distinct name in the process,
// so that a pattern naming an op (`op<"aten.relu.default">`) compares two ids per node, not two
// strings. The pattern interns its name once; devpass::graph's nodes cache their kernel's id in
// the kernel's shared text block (shared_text::interned), so a node's id costs one load after the
// first time any node with that text was asked.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace devpass {

class op_name {
 public:
  constexpr op_name() noexcept = default;  // no name: equal to no interned name

  // The id of `name` (made on first use; the empty name is op_name{}). Thread-safe.
  [[nodiscard]] static op_name of(std::string_view name) {
    if (name.empty()) return {};
    table& t = names();
    const std::lock_guard lock(t.mutex);
    if (const auto found = t.ids.find(name); found != t.ids.end()) return op_name(found->second);
    const std::string& kept = t.texts.emplace_back(name);  // a deque: kept strings never move
    const auto id = static_cast<std::uint32_t>(t.texts.size());
    t.ids.emplace(kept, id);
    return op_name(id);
  }
  [[nodiscard]] std::string_view view() const {
    if (id_ == 0) return {};
    table& t = names();
    const std::lock_guard lock(t.mutex);
    return t.texts[id_ - 1];
  }
  [[nodiscard]] constexpr std::uint32_t id() const noexcept { return id_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return id_ == 0; }
  friend constexpr bool operator==(op_name, op_name) noexcept = default;

  // For a cache that stored id() (shared_text's block).
  [[nodiscard]] static constexpr op_name from_id(std::uint32_t id) noexcept { return op_name(id); }

 private:
  constexpr explicit op_name(std::uint32_t id) noexcept : id_(id) {}
  struct table {
    std::mutex mutex;
    std::unordered_map<std::string_view, std::uint32_t> ids;  // keys view `texts`
    std::deque<std::string> texts;                            // id - 1 -> name
  };
  // One table per program: a function-local static of an inline function is one object.
  static table& names() {
    static table t;
    return t;
  }
  std::uint32_t id_ = 0;
};

}  // namespace devpass
