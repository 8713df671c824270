// devpass/graph/inline_vector.hpp — a vector that holds its first InlineCapacity elements in
// itself and more on the heap: the storage of tensor_shape and node_outputs, and of devpass::graph's
// edge lists (inline_edges.hpp), so that a node and the copies a pass makes need no heap block for
// their dims, specs and first edges (docs/performance.md#what-each-design-choice-saves). A 32-bit
// size and capacity, then the elements or the pointer to more: Boost's small_vector keeps three
// words there. Contiguous, with pointer iterators.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace devpass {

template <class T, std::uint32_t InlineCapacity>
class inline_vector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;

  inline_vector() noexcept {}  // NOLINT: the union's member stays unconstructed
  inline_vector(std::initializer_list<T> elements) { append(elements.begin(), elements.end()); }
  template <std::input_iterator It>
  inline_vector(It first, It last) {
    append(first, last);
  }
  explicit inline_vector(size_type count, const T& value = T()) { resize(count, value); }
  inline_vector(const inline_vector& other) { append(other.begin(), other.end()); }
  inline_vector(inline_vector&& other) noexcept { take(other); }
  inline_vector& operator=(const inline_vector& other) {
    if (this != &other) {
      clear();
      append(other.begin(), other.end());
    }
    return *this;
  }
  inline_vector& operator=(inline_vector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~inline_vector() { release(); }

  [[nodiscard]] T* data() noexcept { return on_heap() ? heap_ : inline_; }
  [[nodiscard]] const T* data() const noexcept { return on_heap() ? heap_ : inline_; }
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
  [[nodiscard]] iterator begin() noexcept { return data(); }
  [[nodiscard]] iterator end() noexcept { return data() + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return data(); }
  [[nodiscard]] const_iterator end() const noexcept { return data() + size_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return end(); }
  [[nodiscard]] T& operator[](size_type i) noexcept { return data()[i]; }
  [[nodiscard]] const T& operator[](size_type i) const noexcept { return data()[i]; }
  [[nodiscard]] T& at(size_type i) { return data()[checked(i)]; }
  [[nodiscard]] const T& at(size_type i) const { return data()[checked(i)]; }
  [[nodiscard]] T& front() noexcept { return data()[0]; }
  [[nodiscard]] const T& front() const noexcept { return data()[0]; }
  [[nodiscard]] T& back() noexcept { return data()[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return data()[size_ - 1]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // Made first: an argument may be one of this vector's own elements, which growing moves.
      T made(std::forward<Args>(args)...);
      grow(size_type{capacity_} * 2);
      std::construct_at(data() + size_, std::move(made));
    } else {
      std::construct_at(data() + size_, std::forward<Args>(args)...);
    }
    return data()[size_++];
  }
  void push_back(const T& spec) { emplace_back(spec); }
  void push_back(T&& spec) { emplace_back(std::move(spec)); }
  void pop_back() noexcept { std::destroy_at(data() + --size_); }
  void clear() noexcept {
    std::destroy(begin(), end());
    size_ = 0;
  }
  // Removes [first, last), sliding what follows down (T's move does not throw).
  iterator erase(const_iterator first, const_iterator last) noexcept {
    T* const at = begin() + (first - cbegin());
    T* const kept_end = std::move(at + (last - first), end(), at);
    std::destroy(kept_end, end());
    size_ = static_cast<std::uint32_t>(kept_end - begin());
    return at;
  }
  iterator erase(const_iterator at) noexcept { return erase(at, at + 1); }
  void reserve(size_type count) {
    if (count > capacity_) grow(count);
  }
  void resize(size_type count, const T& value = T()) {
    reserve(count);
    while (size_ > count) pop_back();
    while (size_ < count) emplace_back(value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    append(first, last);
  }

  friend bool operator==(const inline_vector& a, const inline_vector& b) noexcept { return std::ranges::equal(a, b); }
  friend auto operator<=>(const inline_vector& a,
                          const inline_vector& b) noexcept requires std::three_way_comparable<T> {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  [[nodiscard]] bool on_heap() const noexcept { return capacity_ > InlineCapacity; }
  size_type checked(size_type i) const {
    if (i >= size_) throw std::out_of_range("devpass::inline_vector::at: index out of range");
    return i;
  }
  template <class It>
  void append(It first, It last) {
    if constexpr (std::forward_iterator<It>) reserve(size_ + static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
  }
  // Moves the elements into a heap block of `at_least` (and at least twice the old capacity).
  void grow(size_type at_least) {
    if (at_least > UINT32_MAX / 2) throw std::length_error("devpass::inline_vector: too many elements");
    const auto capacity = static_cast<std::uint32_t>(std::max<size_type>(at_least, 2 * size_type{capacity_}));
    auto* block = static_cast<T*>(::operator new(capacity * sizeof(T)));
    std::uninitialized_move(begin(), end(), block);  // T's move does not throw
    const std::uint32_t count = size_;
    release();
    heap_ = block;
    size_ = count;
    capacity_ = capacity;
  }
  // Destroys the elements and frees the block; leaves an empty inline vector.
  void release() noexcept {
    std::destroy(begin(), end());
    if (on_heap()) ::operator delete(heap_);
    size_ = 0;
    capacity_ = InlineCapacity;
  }
  // From `other`, left empty; *this holds nothing.
  void take(inline_vector& other) noexcept {
    size_ = 0;
    capacity_ = InlineCapacity;
    if (other.on_heap()) {
      heap_ = other.heap_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.size_ = 0;
      other.capacity_ = InlineCapacity;
      return;
    }
    std::uninitialized_move(other.begin(), other.end(), inline_);
    size_ = other.size_;
    other.clear();
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = InlineCapacity;
  union {
    T inline_[InlineCapacity];
    T* heap_;
  };
};

}  // namespace devpass
