// devpass/io/detail/write_buffer.hpp — the file writer's buffered formatter: text is formatted
// straight into one block of memory in front of a stream, and the block goes to the stream whole
// when it fills.
//
//   room(n) / commit(end)   at least n writable bytes, then how far they were written
//   text(s), integer(v), json_string(s), json_string_with_output(s, k), device_name(d)
//   flush()                 hands what is buffered to the stream (call it once at the end)
//
// Why not std::string appends or stream insertion: each field then costs one capacity check and
// one memcpy into memory already there, not a check per byte (append_json_string's old loop) or
// an iostream sentry per field; integers go through std::to_chars, with no string made.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string_view>
#include <vector>

#include "devpass/graph/device.hpp"
#include "devpass/io/detail/json_string.hpp"

namespace devpass::detail {

class write_buffer {
 public:
  // 256 KiB: large enough that the stream (an ofstream) writes rarely, small next to the graph.
  static constexpr std::size_t default_block = std::size_t{1} << 18;

  explicit write_buffer(std::ostream& os, std::size_t block = default_block) : os_(os), block_(block) {
    at_ = block_.data();
  }
  write_buffer(const write_buffer&) = delete;
  write_buffer& operator=(const write_buffer&) = delete;

  [[nodiscard]] char* room(std::size_t n) {
    if (static_cast<std::size_t>(block_.data() + block_.size() - at_) < n) make_room(n);
    return at_;
  }
  void commit(char* end) noexcept { at_ = end; }

  void text(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    at_ += s.size();
  }
  void text(char c) {
    *room(1) = c;
    ++at_;
  }

  template <class Int>
  void integer(Int value) {
    char* to = room(24);  // the longest 64-bit integer is 20 characters
    commit(std::to_chars(to, to + 24, value).ptr);
  }

  void json_string(std::string_view s) {
    char* to = room(json_escaped_size_max(s.size()) + 2);
    *to++ = '"';
    to = write_json_string_body(to, s);
    *to++ = '"';
    commit(to);
  }

  // "s:k" as one JSON string (a reference to output k of the node named s), with no string made.
  void json_string_with_output(std::string_view s, std::uint32_t output) {
    char* to = room(json_escaped_size_max(s.size()) + 2 + 1 + 10);
    *to++ = '"';
    to = write_json_string_body(to, s);
    *to++ = ':';
    to = std::to_chars(to, to + 10, output).ptr;
    *to++ = '"';
    commit(to);
  }

  void device_name(device d) { commit(write_device_name(room(device_name_size_max), d)); }

  void flush() {
    os_.write(block_.data(), static_cast<std::streamsize>(at_ - block_.data()));
    at_ = block_.data();
  }

 private:
  // Out of line: the fast path above is a compare and a branch.
  [[gnu::noinline]] void make_room(std::size_t n) {
    flush();
    if (n > block_.size()) {  // one field larger than the block (a huge attrs object): grow for it
      block_.resize(n);
      at_ = block_.data();
    }
  }

  std::ostream& os_;
  std::vector<char> block_;
  char* at_ = nullptr;
};

}  // namespace devpass::detail
