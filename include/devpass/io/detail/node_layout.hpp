// devpass/io/detail/node_layout.hpp — where a devpass.graph/1 text keeps its nodes, found by one
// pass over the bytes that reads no value: the offset of the `nodes` array, how many elements it
// has, and where to cut it into batches of whole elements.
//
//   scan_node_layout(source, batch_bytes)  nullopt when the text is not laid out as
//       `{ <fields>, "nodes": [ <elements> ] }` with `nodes` the last top-level field; a batch
//       ends at the first comma between elements at least batch_bytes after its start
//
// The scan knows only strings (and their escapes) and brackets; it validates nothing else. That is
// enough for its law: when the text is valid JSON, the cuts fall on the commas between elements,
// so the prefix before the array and each batch (in brackets) are valid JSON documents; and when
// the prefix and every batch parse, the whole text is valid JSON with exactly their meaning. The
// streaming reader relies on it: it parses only those pieces (json_reader.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace devpass::detail {

// The nodes array is most of a file, and inside it the scan needs only the brackets and commas
// outside strings. 64 bytes at a time: a bit per byte for each kind of character (SSE2 compares),
// the bytes inside strings from the quotes' prefix parity, then a step per bracket or comma, not
// per byte (a byte at a time the scan was a ninth of devpass-opt's process on a 1M-node file).
// A chunk holding a backslash goes byte by byte: an escaped quote is not a quote.
struct chunk_marks {
  std::uint64_t quote = 0, backslash = 0, open = 0, close = 0, comma = 0;
};
inline constexpr std::size_t chunk_bytes = 64;
#if defined(__SSE2__)
inline constexpr bool chunk_scan = true;
[[nodiscard]] inline chunk_marks mark_chunk(const char* bytes) noexcept {
  chunk_marks m;
  const auto bits = [](__m128i a, char c) {
    return static_cast<std::uint64_t>(
        static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, _mm_set1_epi8(c)))));
  };
  for (std::size_t k = 0; k < chunk_bytes / 16; ++k) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * k));
    const __m128i folded = _mm_or_si128(a, _mm_set1_epi8(0x20));  // '[' and '{' alike, ']' and '}' alike
    const unsigned shift = static_cast<unsigned>(16 * k);
    m.quote |= bits(a, '"') << shift;
    m.backslash |= bits(a, '\\') << shift;
    m.open |= bits(folded, '{') << shift;
    m.close |= bits(folded, '}') << shift;
    m.comma |= bits(a, ',') << shift;
  }
  return m;
}
#else
inline constexpr bool chunk_scan = false;  // byte by byte only
[[nodiscard]] inline chunk_marks mark_chunk(const char*) noexcept { return {}; }
#endif
// Bit i set when an odd number of bits 0..i of x are: with x a chunk's quotes, the bytes from an
// opening quote up to (not including) its closing one.
[[nodiscard]] constexpr std::uint64_t prefix_parity(std::uint64_t x) noexcept {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

struct node_layout {
  std::size_t nodes_open = 0;     // offset of the nodes array's '['
  std::size_t count = 0;          // its elements
  std::vector<std::size_t> ends;  // batch k runs from after the previous end (or '[') to ends[k]: a comma or the ']'
  std::size_t size = 0;           // bytes of the whole text
};

template <class Source>
std::optional<node_layout> scan_node_layout(Source& source, std::size_t batch_bytes,
                                            std::size_t block_bytes = std::size_t{1} << 20) {
  node_layout layout;
  enum class phase { before_nodes, in_nodes, after_nodes };
  phase at = phase::before_nodes;
  constexpr std::string_view nodes_key = "nodes";
  std::size_t depth = 0;  // containers open
  bool in_string = false;
  int key_match = -1;                    // inside a string at depth 1: the characters of "nodes" it matched so far
  int after_key = 0;                     // 1: the key "nodes" just closed at depth 1; 2: and its ':' was seen
  bool nonempty = false;                 // the array holds something
  bool closed = false;                   // the top-level '}' after the array was seen
  std::size_t batch_start = 0;           // offset of the first byte of the batch being scanned
  std::vector<char> block(block_bytes);  // the text is read a block at a time
  std::size_t offset = 0;                // of the block's first byte
  for (;;) {
    const std::size_t n = source.read(block.data(), block.size());
    if (n == 0) break;
    const char* const bytes = block.data();
    std::size_t by_byte_until = 0;  // a chunk with a backslash goes byte by byte up to here
    for (std::size_t i = 0; i < n; ++i) {
      // Inside the array, once it holds something, whole chunks without a backslash go at once.
      while (chunk_scan && at == phase::in_nodes && nonempty && i >= by_byte_until && n - i >= chunk_bytes) {
        const chunk_marks m = mark_chunk(bytes + i);
        if (m.backslash != 0) {  // past its last backslash and the byte that one escapes
          by_byte_until = i + (chunk_bytes - static_cast<std::size_t>(__builtin_clzll(m.backslash))) + 1;
          break;
        }
        const std::uint64_t inside = prefix_parity(m.quote) ^ (in_string ? ~std::uint64_t{0} : 0);
        const std::uint64_t open = m.open & ~inside, close = m.close & ~inside, comma = m.comma & ~inside;
        std::size_t resume = chunk_bytes;  // where the byte-by-byte scan takes over (the array closed)
        for (std::uint64_t marks = open | close | comma; marks != 0; marks &= marks - 1) {
          const auto b = static_cast<std::size_t>(__builtin_ctzll(marks));
          const std::size_t pos = offset + i + b;
          if (open >> b & 1u) {
            ++depth;
          } else if (close >> b & 1u) {
            if (depth == 0) return std::nullopt;
            if (--depth == 1) {
              if (bytes[i + b] != ']') return std::nullopt;
              layout.ends.push_back(pos);
              ++layout.count;  // nonempty: the commas counted the elements before the last
              at = phase::after_nodes;
              resume = b + 1;
              break;
            }
          } else if (depth == 2) {
            ++layout.count;
            if (pos - batch_start >= batch_bytes) {
              layout.ends.push_back(pos);
              batch_start = pos + 1;
            }
          }
        }
        in_string = resume == chunk_bytes && (inside >> 63) != 0;  // a closing bracket is outside strings
        i += resume;
      }
      if (i == n) break;
      if (in_string) {
        // Strings are most of the bytes: skip to the next quote or backslash.
        while (i < n && bytes[i] != '"' && bytes[i] != '\\') {
          if (key_match >= 0)
            key_match =
                key_match < 5 && bytes[i] == nodes_key[static_cast<std::size_t>(key_match)] ? key_match + 1 : -1;
          ++i;
        }
        if (i == n) break;
        if (bytes[i] == '\\') {
          key_match = -1;  // an escaped key is not "nodes" as written: the slow path decides
          if (++i == n) {  // the escaped byte starts the next block: skip it there
            if (source.read(block.data(), 1) == 0) return std::nullopt;
            offset += 1;  // counted in this block's offset: no position is taken after it
          }
          continue;
        }
        in_string = false;
        if (at == phase::before_nodes && depth == 1) after_key = key_match == 5 ? 1 : 0;
        continue;
      }
      const char c = bytes[i];
      const std::size_t pos = offset + i;
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
      if (at == phase::after_nodes) {
        if (c != '}' || closed) return std::nullopt;
        closed = true;
        continue;
      }
      switch (c) {
        case '"':
          in_string = true;
          nonempty = nonempty || at == phase::in_nodes;
          key_match = at == phase::before_nodes && depth == 1 && after_key == 0 ? 0 : -1;
          after_key = 0;
          break;
        case ':': after_key = after_key == 1 ? 2 : 0; break;
        case '[':
        case '{':
          if (at == phase::before_nodes && depth == 1 && after_key == 2 && c == '[') {
            at = phase::in_nodes;
            layout.nodes_open = pos;
            batch_start = pos + 1;
          } else if (at == phase::in_nodes) {
            nonempty = true;
          }
          after_key = 0;
          ++depth;
          break;
        case ']':
        case '}':
          if (depth == 0) return std::nullopt;
          --depth;
          after_key = 0;
          if (at == phase::in_nodes && depth == 1) {
            if (c != ']') return std::nullopt;
            layout.ends.push_back(pos);
            layout.count += nonempty ? 1 : 0;  // the commas counted the elements before the last
            at = phase::after_nodes;
          }
          break;
        case ',':
          after_key = 0;
          if (at == phase::in_nodes && depth == 2) {
            ++layout.count;
            if (pos - batch_start >= batch_bytes) {
              layout.ends.push_back(pos);
              batch_start = pos + 1;
            }
          }
          break;
        default:
          after_key = 0;
          if (at == phase::in_nodes) nonempty = true;
      }
    }
    offset += n;
  }
  layout.size = offset;
  if (source.failed() || at != phase::after_nodes || !closed || in_string) return std::nullopt;
  return layout;
}

}  // namespace devpass::detail
