// devpass/graph/shared_text.hpp — an immutable string that the nodes holding the same text share:
// a node's kernel and attrs. One pointer wide (a std::string is four), empty without a block,
// and copied by a reference count, so the copies a pass makes and a graph's copy cost no
// allocation for them. The reader gives every node with the same kernel (or attrs) one block,
// as a compiler uniques its op names (docs/performance.md#what-each-design-choice-saves).
#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "devpass/graph/op_name.hpp"

namespace devpass {

class shared_text {
 public:
  shared_text() noexcept = default;
  shared_text(std::string_view text) : block_(text.empty() ? nullptr : make(text)) {}  // NOLINT: implicit
  shared_text(const std::string& text) : shared_text(std::string_view(text)) {}        // NOLINT: implicit
  shared_text(const char* text) : shared_text(std::string_view(text)) {}               // NOLINT: implicit
  shared_text(const shared_text& other) noexcept : block_(other.block_) { retain(); }
  shared_text(shared_text&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  shared_text& operator=(const shared_text& other) noexcept {
    shared_text(other).swap(*this);
    return *this;
  }
  shared_text& operator=(shared_text&& other) noexcept {
    shared_text(std::move(other)).swap(*this);
    return *this;
  }
  ~shared_text() { release(); }

  [[nodiscard]] std::string_view view() const noexcept {
    return block_ ? std::string_view(chars(block_), block_->size) : std::string_view{};
  }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: implicit
  [[nodiscard]] std::string str() const { return std::string(view()); }
  [[nodiscard]] const char* data() const noexcept { return view().data(); }
  [[nodiscard]] std::size_t size() const noexcept { return block_ ? block_->size : 0; }
  [[nodiscard]] bool empty() const noexcept { return block_ == nullptr; }
  [[nodiscard]] auto begin() const noexcept { return view().begin(); }
  [[nodiscard]] auto end() const noexcept { return view().end(); }
  [[nodiscard]] char operator[](std::size_t i) const noexcept { return view()[i]; }
  [[nodiscard]] bool starts_with(std::string_view prefix) const noexcept { return view().starts_with(prefix); }
  [[nodiscard]] bool ends_with(std::string_view suffix) const noexcept { return view().ends_with(suffix); }
  // The text as an interned op name (op_name.hpp), cached in the block: the first call for a
  // block interns its text, later ones (from any node sharing it) read the id.
  [[nodiscard]] op_name interned() const {
    if (!block_) return {};
    std::uint32_t id = block_->name_id.load(std::memory_order_relaxed);
    if (id == 0) {
      id = op_name::of(view()).id();
      block_->name_id.store(id, std::memory_order_relaxed);  // the same id from any thread
    }
    return op_name::from_id(id);
  }
  // True when both hold one block (the same text, shared), or are both empty.
  [[nodiscard]] bool shares_block_with(const shared_text& other) const noexcept { return block_ == other.block_; }
  void clear() noexcept { shared_text().swap(*this); }
  void swap(shared_text& other) noexcept { std::swap(block_, other.block_); }

  friend bool operator==(const shared_text& a, const shared_text& b) noexcept {
    return a.block_ == b.block_ || a.view() == b.view();
  }
  friend bool operator==(const shared_text& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator==(const shared_text& a, const char* b) noexcept { return a.view() == b; }
  friend bool operator==(const shared_text& a, const std::string& b) noexcept { return a.view() == b; }
  friend std::strong_ordering operator<=>(const shared_text& a, const shared_text& b) noexcept {
    return a.view() <=> b.view();
  }
  friend std::string operator+(const shared_text& a, std::string_view b) { return std::string(a.view()).append(b); }
  friend std::string operator+(std::string_view a, const shared_text& b) { return std::string(a).append(b.view()); }
  // Streams like a string (a template, so that this header needs no <ostream>).
  template <class Stream>
  requires requires(Stream& os, std::string_view s) { os << s; }
  friend Stream& operator<<(Stream& os, const shared_text& t) {
    os << t.view();
    return os;
  }

 private:
  struct block {
    std::atomic<std::uint32_t> references;
    std::uint32_t size;
    std::atomic<std::uint32_t> name_id{0};  // op_name::id() of the text, 0 until interned()
  };
  static char* chars(block* b) noexcept { return reinterpret_cast<char*>(b + 1); }
  static block* make(std::string_view text) {
    if (text.size() > UINT32_MAX) throw std::length_error("devpass::shared_text: text over 4 GiB");
    void* memory = ::operator new(sizeof(block) + text.size());
    block* b = new (memory) block{{1}, static_cast<std::uint32_t>(text.size()), {0}};
    std::memcpy(chars(b), text.data(), text.size());
    return b;
  }
  void retain() const noexcept {
    if (block_) block_->references.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    if (block_ && block_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      block_->~block();
      ::operator delete(block_);
    }
  }

  block* block_ = nullptr;
};

// Gives equal texts one block: a reader's pool, so that a million nodes naming a few hundred
// kernels hold a few hundred blocks. It remembers at most `capacity` texts (attrs are often
// unique per node; past that, a new text gets a block of its own and is not remembered).
class shared_text_pool {
 public:
  explicit shared_text_pool(std::size_t capacity = 4096) : capacity_(capacity) {}
  [[nodiscard]] shared_text get(std::string_view text) {
    if (text.empty()) return {};
    if (const auto found = texts_.find(text); found != texts_.end()) return found->second;
    shared_text made(text);
    if (texts_.size() < capacity_) texts_.emplace(made.view(), made);  // the key views the block
    return made;
  }

 private:
  std::size_t capacity_;
  std::unordered_map<std::string_view, shared_text> texts_;
};

}  // namespace devpass
