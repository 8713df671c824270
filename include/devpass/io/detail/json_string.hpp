// devpass/io/detail/json_string.hpp — a string as a JSON string literal: what the file writer and
// the JSON reports (io/capture_json.hpp) print.
//
//   append_json_string(out, text)     appends "text", escaped, to a std::string
//   write_json_string_body(to, text)  writes text escaped (no quotes) at `to`, which has room for
//                                     json_escaped_size_max(text.size()) bytes; returns the end
//
// Escaping: the quote, the backslash and the control characters (U+0000–U+001F), with the short
// forms JSON defines (\n, \t, ...) and \u00XX for the rest. Bytes >= 0x80 pass through (the reader
// has checked they are UTF-8), as does everything else, 0x7f included. Both functions write the
// same bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace devpass::detail {

// Which bytes a JSON string cannot hold as they are.
inline constexpr std::array<bool, 256> json_escaped_bytes = [] {
  std::array<bool, 256> escaped{};
  for (std::size_t u = 0; u < 0x20; ++u) escaped[u] = true;
  escaped['"'] = escaped['\\'] = true;
  return escaped;
}();

// The longest escape of one byte is "\u001f": 6 bytes.
[[nodiscard]] constexpr std::size_t json_escaped_size_max(std::size_t bytes) noexcept { return 6 * bytes; }

// Writes the escape of `u` (a byte json_escaped_bytes marks) at `to`; returns the end.
inline char* write_json_escape(char* to, unsigned char u) noexcept {
  static constexpr char hex[] = "0123456789abcdef";
  char short_form = 0;
  switch (u) {
    case '"': short_form = '"'; break;
    case '\\': short_form = '\\'; break;
    case '\n': short_form = 'n'; break;
    case '\r': short_form = 'r'; break;
    case '\t': short_form = 't'; break;
    case '\b': short_form = 'b'; break;
    case '\f': short_form = 'f'; break;
    default: break;
  }
  *to++ = '\\';
  if (short_form) {
    *to++ = short_form;
    return to;
  }
  std::memcpy(to, "u00", 3);
  to[3] = hex[u >> 4];
  to[4] = hex[u & 0xF];
  return to + 5;
}

// The common case, a whole id or kernel name with nothing to escape, is one append.
inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t run = 0;  // start of the bytes that need no escape, not yet appended
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (!json_escaped_bytes[u]) continue;
    if (i != run) out.append(text.data() + run, i - run);
    char escape[6];
    out.append(escape, write_json_escape(escape, u));
    run = i + 1;
  }
  if (run != text.size()) out.append(text.data() + run, text.size() - run);  // (an empty view's data may be null)
  out += '"';
}

// Byte by byte, not run by run: ids are a few bytes long, and a store per byte costs less than a
// memcpy call per run (callgrind, the 100k-node file: 71M instructions against 85M).
inline char* write_json_string_body(char* to, std::string_view text) noexcept {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (!json_escaped_bytes[u])
      *to++ = c;
    else
      to = write_json_escape(to, u);
  }
  return to;
}

}  // namespace devpass::detail
