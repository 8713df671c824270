// devpass/io/detail/text_source.hpp — text read front to back in pieces, from a file or from
// memory: what the streaming reader (json_reader.hpp) reads twice, so that a file is never held
// whole.
//
//   read(out, n)  copies up to n next bytes to out, returns how many (0: the end, or an error)
//   rewind()      starts again from the first byte; false when the file cannot
//   failed()      whether a read failed (the text then counts as unreadable, not as ended)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace devpass::detail {

class memory_source {
 public:
  explicit memory_source(std::string_view text) : text_(text) {}
  std::size_t read(char* out, std::size_t n) {
    n = std::min(n, text_.size() - at_);
    // An empty view may hold a null pointer, and memcpy's arguments must not be null even for
    // zero bytes (UBSan reports it; the fuzzer's empty input found it).
    if (n == 0) return 0;
    std::memcpy(out, text_.data() + at_, n);
    at_ += n;
    return n;
  }
  bool rewind() {
    at_ = 0;
    return true;
  }
  [[nodiscard]] bool failed() const { return false; }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

class file_source {
 public:
  explicit file_source(const std::string& path) : file_(std::fopen(path.c_str(), "rb")) {}
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;
  ~file_source() {
    if (file_) std::fclose(file_);
  }
  [[nodiscard]] bool is_open() const { return file_ != nullptr; }
  std::size_t read(char* out, std::size_t n) { return std::fread(out, 1, n, file_); }
  bool rewind() { return std::fseek(file_, 0, SEEK_SET) == 0; }
  [[nodiscard]] bool failed() const { return std::ferror(file_) != 0; }

 private:
  std::FILE* file_;
};

}  // namespace devpass::detail
