// devpass/io/policy_json.hpp — a compile-time policy's knobs and the run-time options as JSON,
// from their reflection (passes/policy_reflection.hpp): what devpass-opt --print-policy prints.
#pragma once

#include <string>
#include <string_view>

#include "devpass/passes/policy_reflection.hpp"

namespace devpass::reflection {

namespace detail {
inline void append_json_value(std::string& out, bool v) { out += v ? "true" : "false"; }
inline void append_json_value(std::string& out, copy_policy v) { (out += '"').append(to_string(v)) += '"'; }
template <class Struct>
void append_json_object(std::string& out, const Struct& s) {
  out += '{';
  bool first = true;
  for_each_knob(s, [&](std::string_view name, const auto& value) {
    if (!first) out += ", ";
    first = false;
    (out += '"').append(name) += "\": ";
    append_json_value(out, value);
  });
  out += '}';
}
}  // namespace detail

// {"compiled": {the policy's knobs}, "options": {the run-time knobs}}: what --print-policy prints.
template <class Policy>
std::string policy_json(const propagate_options& options) {
  std::string out = "{\"compiled\": ";
  detail::append_json_object(out, knobs_of<Policy>());
  out += ", \"options\": ";
  detail::append_json_object(out, options);
  return out + "}";
}

}  // namespace devpass::reflection
