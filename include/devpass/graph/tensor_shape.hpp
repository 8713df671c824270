// devpass/graph/tensor_shape.hpp — a tensor's dimensions, up to four stored inline.
//
// Every value of a graph has one, and a pass makes a value for every copy it inserts: a heap block
// per shape was a tenth of propagation's allocations (docs/performance.md, "A node without heap
// blocks"). 40 bytes: a 32-bit size and capacity, then four dimensions or the pointer to more
// (Boost's small_vector<std::int64_t, 4> takes 56). Contiguous, with pointer iterators, so it is
// a range and a std::span; a std::vector of dimensions converts implicitly and compares equal, as
// the member was a std::vector before.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <stdexcept>
#include <vector>

namespace devpass {

class tensor_shape {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  static constexpr std::uint32_t inline_capacity = 4;

  tensor_shape() noexcept = default;
  tensor_shape(std::initializer_list<std::int64_t> dims) { append(dims.begin(), dims.size()); }
  tensor_shape(const std::vector<std::int64_t>& dims) { append(dims.data(), dims.size()); }  // NOLINT: implicit
  tensor_shape(std::span<const std::int64_t> dims) { append(dims.data(), dims.size()); }     // NOLINT: implicit
  template <std::input_iterator It>
  tensor_shape(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  explicit tensor_shape(size_type count, std::int64_t value = 0) { resize(count, value); }
  tensor_shape(const tensor_shape& other) { append(other.data(), other.size()); }
  tensor_shape(tensor_shape&& other) noexcept { take(other); }
  tensor_shape& operator=(const tensor_shape& other) {
    if (this != &other) {
      clear();
      append(other.data(), other.size());
    }
    return *this;
  }
  tensor_shape& operator=(tensor_shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~tensor_shape() { release(); }

  [[nodiscard]] std::int64_t* data() noexcept { return on_heap() ? heap_ : inline_; }
  [[nodiscard]] const std::int64_t* data() const noexcept { return on_heap() ? heap_ : inline_; }
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
  [[nodiscard]] iterator begin() noexcept { return data(); }
  [[nodiscard]] iterator end() noexcept { return data() + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return data(); }
  [[nodiscard]] const_iterator end() const noexcept { return data() + size_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return end(); }
  [[nodiscard]] std::int64_t& operator[](size_type i) noexcept { return data()[i]; }
  [[nodiscard]] const std::int64_t& operator[](size_type i) const noexcept { return data()[i]; }
  [[nodiscard]] std::int64_t& at(size_type i) { return data()[checked(i)]; }
  [[nodiscard]] const std::int64_t& at(size_type i) const { return data()[checked(i)]; }
  [[nodiscard]] std::int64_t& front() noexcept { return data()[0]; }
  [[nodiscard]] const std::int64_t& front() const noexcept { return data()[0]; }
  [[nodiscard]] std::int64_t& back() noexcept { return data()[size_ - 1]; }
  [[nodiscard]] const std::int64_t& back() const noexcept { return data()[size_ - 1]; }

  void push_back(std::int64_t dim) {
    if (size_ == capacity_) grow(size_ + 1);
    data()[size_++] = dim;
  }
  std::int64_t& emplace_back(std::int64_t dim) {
    push_back(dim);
    return back();
  }
  void pop_back() noexcept { --size_; }
  void clear() noexcept { size_ = 0; }
  void reserve(size_type count) {
    if (count > capacity_) grow(count);
  }
  void resize(size_type count, std::int64_t value = 0) {
    reserve(count);
    if (count > size_) std::fill(data() + size_, data() + count, value);
    size_ = static_cast<std::uint32_t>(count);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }

  [[nodiscard]] std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }
  operator std::span<const std::int64_t>() const noexcept { return {data(), size()}; }  // NOLINT: implicit

  friend bool operator==(const tensor_shape& a, const tensor_shape& b) noexcept { return std::ranges::equal(a, b); }
  friend bool operator==(const tensor_shape& a, const std::vector<std::int64_t>& b) noexcept {
    return std::ranges::equal(a, b);
  }
  friend auto operator<=>(const tensor_shape& a, const tensor_shape& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  [[nodiscard]] bool on_heap() const noexcept { return capacity_ > inline_capacity; }
  size_type checked(size_type i) const {
    if (i >= size_) throw std::out_of_range("devpass::tensor_shape::at: dimension out of range");
    return i;
  }
  void append(const std::int64_t* dims, size_type count) {
    reserve(size_ + count);
    if (count != 0) std::memcpy(data() + size_, dims, count * sizeof(std::int64_t));
    size_ += static_cast<std::uint32_t>(count);
  }
  void grow(size_type at_least) {
    if (at_least > UINT32_MAX / 2) throw std::length_error("devpass::tensor_shape: too many dimensions");
    const auto capacity = static_cast<std::uint32_t>(std::max<size_type>(at_least, 2 * size_type{capacity_}));
    auto* dims = new std::int64_t[capacity];
    if (size_ != 0) std::memcpy(dims, data(), size_ * sizeof(std::int64_t));
    release();
    heap_ = dims;
    capacity_ = capacity;
  }
  void release() noexcept {
    if (on_heap()) delete[] heap_;
    capacity_ = inline_capacity;
  }
  // From `other`, which is left empty; *this holds nothing (released or new).
  void take(tensor_shape& other) noexcept {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else if (size_ != 0) {
      std::memcpy(inline_, other.inline_, size_ * sizeof(std::int64_t));
    }
    other.size_ = 0;
    other.capacity_ = inline_capacity;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = inline_capacity;
  union {
    std::int64_t inline_[inline_capacity] = {};
    std::int64_t* heap_;
  };
};

}  // namespace devpass
