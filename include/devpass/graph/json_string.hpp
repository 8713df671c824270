// devpass/graph/json_string.hpp — a string as a JSON string literal: what the file writer and
// the reports of core headers (the capturability verdict) print. Here, not in io/, because core
// headers use it and no core header includes io/.
#pragma once

#include <string>
#include <string_view>

namespace devpass::detail {

// Appends `text` as a JSON string literal. Bytes >= 0x80 pass through (the reader has checked
// they are UTF-8); control characters are escaped, with the short forms JSON defines.
inline void append_json_string(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += hex[u >> 4];
          out += hex[u & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace devpass::detail
