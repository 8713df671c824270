// devpass/io/capture_json.hpp — the capturability verdict (planning/capturability.hpp) as JSON,
// for tools (devpass-opt --capturability=json). The core reports it as text; JSON is written in
// io/ only.
#pragma once

#include <cstddef>
#include <string>

#include "devpass/graph/graph.hpp"
#include "devpass/io/detail/json_string.hpp"
#include "devpass/planning/capturability.hpp"

namespace devpass {

// One JSON object: {"verdict", "segments": [{"nodes", "first", "last"}], "reasons": [{"node", "cause", "detail"}]}.
[[nodiscard]] inline std::string capture_json(const graph& g, const capture_verdict& v) {
  std::string out = "{\"verdict\": \"" + std::string(to_string(v.kind)) + "\", \"segments\": [";
  for (std::size_t s = 0; s < v.segments.size(); ++s) {
    const auto& nodes = v.segments[s].nodes;
    out += (s ? ", " : "") + std::string("{\"nodes\": ") + std::to_string(nodes.size()) + ", \"first\": ";
    detail::append_json_string(out, g[nodes.front()].id);
    out += ", \"last\": ";
    detail::append_json_string(out, g[nodes.back()].id);
    out += "}";
  }
  out += "], \"reasons\": [";
  for (std::size_t i = 0; i < v.reasons.size(); ++i) {
    const auto& r = v.reasons[i];
    out += i ? ", {\"node\": " : "{\"node\": ";
    detail::append_json_string(out, r.node);
    out += ", \"cause\": \"" + std::string(to_string(r.cause)) + "\", \"detail\": ";
    detail::append_json_string(out, r.detail);
    out += "}";
  }
  return out + "]}";
}

}  // namespace devpass
