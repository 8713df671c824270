// devpass/io/detail/json_field_checks.hpp — typed access to a parsed JSON value whose failures are
// the reader's errors: `file: node 'id': field: expected a string, found a number`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "devpass/graph/error.hpp"
#include "devpass/io/detail/field_path.hpp"

namespace devpass::detail {

// The reader's checks of single values, apart from what it reads them into. Messages name the
// file given at construction.
class json_field_checks {
 public:
  explicit json_field_checks(std::string_view file) : file_(file) {}

 protected:
  using element = simdjson::dom::element;
  using element_type = simdjson::dom::element_type;

  [[noreturn]] void fail(std::string node, std::string field, std::string problem) const {
    throw graph_error(std::string(file_), std::move(node), std::move(field), std::move(problem));
  }
  [[noreturn]] void fail(const std::string& node, const field_path& field, std::string problem) const {
    fail(node, field.str(), std::move(problem));
  }

  static std::string parse_problem(simdjson::error_code code) {
    switch (code) {
      case simdjson::DEPTH_ERROR:
        return "invalid JSON: nested deeper than " + std::to_string(simdjson::DEFAULT_MAX_DEPTH) + " levels";
      case simdjson::UTF8_ERROR: return "invalid JSON: the text is not valid UTF-8";
      case simdjson::EMPTY: return "invalid JSON: the file is empty";
      case simdjson::CAPACITY: return "invalid JSON: the file is too large to parse";
      default: return std::string("invalid JSON: ") + simdjson::error_message(code);
    }
  }

  static std::string_view type_name(element_type t) {
    switch (t) {
      case element_type::ARRAY: return "an array";
      case element_type::OBJECT: return "an object";
      case element_type::INT64:
      case element_type::UINT64:
      case element_type::DOUBLE: return "a number";
      case element_type::STRING: return "a string";
      case element_type::BOOL: return "a boolean";
      case element_type::NULL_VALUE: return "null";
    }
    return "a value";
  }

  // Quoted for messages; long text is cut so a message stays one readable line.
  static std::string quoted(std::string_view text) {
    constexpr std::size_t limit = 60;
    if (text.size() > limit) return "'" + std::string(text.substr(0, limit)) + "...'";
    return "'" + std::string(text) + "'";
  }

  std::string_view expect_string(element e, const std::string& node, const field_path& field) const {
    std::string_view s;
    if (e.get_string().get(s)) fail(node, field, "expected a string, found " + std::string(type_name(e.type())));
    return s;
  }
  simdjson::dom::array expect_array(element e, const std::string& node, const field_path& field) const {
    simdjson::dom::array a;
    if (e.get_array().get(a)) fail(node, field, "expected an array, found " + std::string(type_name(e.type())));
    return a;
  }
  simdjson::dom::object expect_object(element e, const std::string& node, const field_path& field) const {
    simdjson::dom::object o;
    if (e.get_object().get(o)) fail(node, field, "expected an object, found " + std::string(type_name(e.type())));
    return o;
  }
  bool expect_bool(element e, const std::string& node, const field_path& field) const {
    bool b = false;
    if (e.get_bool().get(b)) fail(node, field, "expected a boolean, found " + std::string(type_name(e.type())));
    return b;
  }
  // A JSON integer in [0, max]; `what` names the quantity in messages ("dimension", "offset").
  std::int64_t expect_count(element e, std::int64_t max, const std::string& node, const field_path& field,
                            std::string_view what) const {
    switch (e.type()) {
      case element_type::INT64: {
        const std::int64_t v = e.get_int64().value_unsafe();
        if (v < 0) fail(node, field, "negative " + std::string(what) + " " + std::to_string(v));
        if (v > max)
          fail(node, field, std::string(what) + " " + std::to_string(v) + " is larger than " + std::to_string(max));
        return v;
      }
      case element_type::UINT64:
        fail(node, field,
             std::string(what) + " " + std::to_string(e.get_uint64().value_unsafe()) + " is larger than " +
                 std::to_string(max));
      case element_type::DOUBLE: fail(node, field, std::string(what) + " is not an integer");
      default: fail(node, field, "expected an integer, found " + std::string(type_name(e.type())));
    }
  }

 private:
  std::string_view file_;
};

}  // namespace devpass::detail
