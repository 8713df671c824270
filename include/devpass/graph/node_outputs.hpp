// devpass/graph/node_outputs.hpp — a node's output values: one spec stored inline, more on the heap.
//
// Most nodes have one output, and every copy a pass makes does; a heap block for it was one of a
// node's four (docs/performance.md, "A node without heap blocks"). 88 bytes: a 32-bit size and
// capacity, then the spec or the pointer to more (Boost's small_vector<tensor_spec, 1> takes 104).
// Contiguous, with pointer iterators; a std::vector of specs converts implicitly and compares
// equal, as the member was a std::vector before.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "devpass/graph/tensor_spec.hpp"

namespace devpass {

class node_outputs {
 public:
  using value_type = tensor_spec;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = tensor_spec&;
  using const_reference = const tensor_spec&;
  using iterator = tensor_spec*;
  using const_iterator = const tensor_spec*;

  node_outputs() noexcept {}  // NOLINT: the union's member stays unconstructed
  node_outputs(std::initializer_list<tensor_spec> specs) { append(specs.begin(), specs.end()); }
  node_outputs(const std::vector<tensor_spec>& specs) { append(specs.begin(), specs.end()); }  // NOLINT: implicit
  template <std::input_iterator It>
  node_outputs(It first, It last) {
    append(first, last);
  }
  node_outputs(const node_outputs& other) { append(other.begin(), other.end()); }
  node_outputs(node_outputs&& other) noexcept { take(other); }
  node_outputs& operator=(const node_outputs& other) {
    if (this != &other) {
      clear();
      append(other.begin(), other.end());
    }
    return *this;
  }
  node_outputs& operator=(node_outputs&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~node_outputs() { release(); }

  [[nodiscard]] tensor_spec* data() noexcept { return on_heap() ? heap_ : &inline_; }
  [[nodiscard]] const tensor_spec* data() const noexcept { return on_heap() ? heap_ : &inline_; }
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
  [[nodiscard]] iterator begin() noexcept { return data(); }
  [[nodiscard]] iterator end() noexcept { return data() + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return data(); }
  [[nodiscard]] const_iterator end() const noexcept { return data() + size_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return end(); }
  [[nodiscard]] tensor_spec& operator[](size_type i) noexcept { return data()[i]; }
  [[nodiscard]] const tensor_spec& operator[](size_type i) const noexcept { return data()[i]; }
  [[nodiscard]] tensor_spec& at(size_type i) { return data()[checked(i)]; }
  [[nodiscard]] const tensor_spec& at(size_type i) const { return data()[checked(i)]; }
  [[nodiscard]] tensor_spec& front() noexcept { return data()[0]; }
  [[nodiscard]] const tensor_spec& front() const noexcept { return data()[0]; }
  [[nodiscard]] tensor_spec& back() noexcept { return data()[size_ - 1]; }
  [[nodiscard]] const tensor_spec& back() const noexcept { return data()[size_ - 1]; }

  template <class... Args>
  tensor_spec& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // Made first: an argument may be one of this vector's own specs, which growing moves.
      tensor_spec made(std::forward<Args>(args)...);
      grow(size_type{capacity_} * 2);
      std::construct_at(data() + size_, std::move(made));
    } else {
      std::construct_at(data() + size_, std::forward<Args>(args)...);
    }
    return data()[size_++];
  }
  void push_back(const tensor_spec& spec) { emplace_back(spec); }
  void push_back(tensor_spec&& spec) { emplace_back(std::move(spec)); }
  void pop_back() noexcept { std::destroy_at(data() + --size_); }
  void clear() noexcept {
    std::destroy(begin(), end());
    size_ = 0;
  }
  void reserve(size_type count) {
    if (count > capacity_) grow(count);
  }
  void resize(size_type count) {
    reserve(count);
    while (size_ > count) pop_back();
    while (size_ < count) emplace_back();
  }

  friend bool operator==(const node_outputs& a, const node_outputs& b) noexcept { return std::ranges::equal(a, b); }
  friend bool operator==(const node_outputs& a, const std::vector<tensor_spec>& b) noexcept {
    return std::ranges::equal(a, b);
  }

 private:
  [[nodiscard]] bool on_heap() const noexcept { return capacity_ > 1; }
  size_type checked(size_type i) const {
    if (i >= size_) throw std::out_of_range("devpass::node_outputs::at: output out of range");
    return i;
  }
  template <class It>
  void append(It first, It last) {
    if constexpr (std::forward_iterator<It>) reserve(size_ + static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
  }
  // Moves the specs into a heap block of `at_least` (and at least twice the old capacity).
  void grow(size_type at_least) {
    if (at_least > UINT32_MAX / 2) throw std::length_error("devpass::node_outputs: too many outputs");
    const auto capacity = static_cast<std::uint32_t>(std::max<size_type>(at_least, 2 * size_type{capacity_}));
    auto* block = static_cast<tensor_spec*>(::operator new(capacity * sizeof(tensor_spec)));
    std::uninitialized_move(begin(), end(), block);  // tensor_spec's move does not throw
    const std::uint32_t count = size_;
    release();
    heap_ = block;
    size_ = count;
    capacity_ = capacity;
  }
  // Destroys the specs and frees the block; leaves an empty inline vector.
  void release() noexcept {
    std::destroy(begin(), end());
    if (on_heap()) ::operator delete(heap_);
    size_ = 0;
    capacity_ = 1;
  }
  // From `other`, left empty; *this holds nothing.
  void take(node_outputs& other) noexcept {
    if (other.on_heap()) {
      heap_ = other.heap_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.size_ = 0;
      other.capacity_ = 1;
      return;
    }
    size_ = 0;
    capacity_ = 1;
    if (other.size_ == 1) {
      std::construct_at(&inline_, std::move(other.inline_));
      size_ = 1;
      other.clear();
    }
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 1;
  union {
    tensor_spec inline_;
    tensor_spec* heap_;
  };
};

}  // namespace devpass
