// devpass/io/cast_signatures_json.hpp — cast signatures (passes/cast_signatures.hpp) from JSON:
// one member per op, its value the list of what each operand slot wants, a dtype name
// (graph/dtype.hpp) or null for any:
//
//   {"aten.mm.default": ["float16", "float16"], "relu": [null]}
//
//   read_cast_signatures_string(json, label)   label names the text in messages
//   read_cast_signatures_file(path)
//
// Every rejected input throws graph_error `file: op 'name': slot i: what is wrong` (the op and
// the slot where there are ones): bad JSON, a top level that is not an object, an op listed
// twice or with an empty name, an entry that is not an array, a slot that is neither a string
// nor null, a name that is no dtype.
#pragma once

#ifdef DEVPASS_IO_WITHOUT_SIMDJSON
#error \
    "devpass: the cast signatures reader needs simdjson, which was not found when devpass was configured: install it (Debian: libsimdjson-dev) and configure again"
#endif

#include <cstdint>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "devpass/graph/dtype.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/passes/cast_signatures.hpp"

namespace devpass {

namespace detail {
inline std::string_view json_type_name(simdjson::dom::element_type t) {
  using type = simdjson::dom::element_type;
  switch (t) {
    case type::ARRAY: return "an array";
    case type::OBJECT: return "an object";
    case type::INT64:
    case type::UINT64:
    case type::DOUBLE: return "a number";
    case type::STRING: return "a string";
    case type::BOOL: return "a boolean";
    case type::NULL_VALUE: return "null";
  }
  return "a value";
}
// "float32, float16, ..., bool": the names a slot may hold.
inline std::string dtype_names() {
  std::string names;
  for (std::size_t i = 0; i < detail::dtype_table.size(); ++i)
    names.append(i ? ", " : "").append(detail::dtype_table[i].name);
  return names;
}
}  // namespace detail

[[nodiscard]] inline cast_signatures read_cast_signatures_string(std::string_view json, const std::string& label) {
  const auto fail = [&](std::string field, std::string problem) {
    throw graph_error(label, "", std::move(field), std::move(problem));
  };
  simdjson::dom::parser parser;
  const simdjson::padded_string text(json);
  simdjson::dom::element root;
  if (auto code = parser.parse(text).get(root)) {
    if (!simdjson::validate_utf8(text.data(), text.size())) code = simdjson::UTF8_ERROR;
    fail("", std::string("invalid JSON: ") + simdjson::error_message(code));
  }
  simdjson::dom::object ops;
  if (root.get_object().get(ops))
    fail("", "expected an object mapping op names to slot lists, found " +
                 std::string(detail::json_type_name(root.type())));
  cast_signatures signatures;
  for (const auto member : ops) {
    const std::string op(member.key);
    const std::string where = "op '" + op + "'";
    if (op.empty()) fail(where, "an op name is not empty");
    if (signatures.find(std::string_view(op))) fail(where, "listed twice");
    simdjson::dom::array list;
    if (member.value.get_array().get(list))
      fail(where, "expected an array with one dtype name or null per operand slot, found " +
                      std::string(detail::json_type_name(member.value.type())));
    cast_signatures::slots wanted;
    std::uint32_t slot = 0;
    for (const auto item : list) {
      const std::string at = where + ": slot " + std::to_string(slot++);
      if (item.is_null()) {
        wanted.emplace_back();
        continue;
      }
      std::string_view name;
      if (item.get_string().get(name))
        fail(at, "expected a dtype name or null, found " + std::string(detail::json_type_name(item.type())));
      const auto type = parse_dtype(name);
      if (!type) fail(at, "'" + std::string(name) + "' is not a dtype (" + detail::dtype_names() + ")");
      wanted.emplace_back(*type);
    }
    signatures.set(op, std::move(wanted));
  }
  return signatures;
}

[[nodiscard]] inline cast_signatures read_cast_signatures_file(const std::string& path) {
  simdjson::padded_string text;
  if (const auto code = simdjson::padded_string::load(path).get(text))
    throw graph_error(path, "", "", code == simdjson::IO_ERROR ? "cannot open the file" : "cannot read the file");
  return read_cast_signatures_string(std::string_view(text.data(), text.size()), path);
}

}  // namespace devpass
