// devpass/graph/verify_report.hpp — what a verifier returns: every problem it found, each a
// graph_error naming the node and the field.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"

namespace devpass {

struct verify_report {
  std::vector<graph_error> problems;

  [[nodiscard]] bool ok() const noexcept { return problems.empty(); }
  // One problem per line, each line ending in '\n'; empty when ok().
  [[nodiscard]] std::string to_string() const {
    std::string text;
    for (const auto& p : problems) (text += p.what()) += '\n';
    return text;
  }
};

namespace detail {

inline void report(verify_report& r, const std::string& node, std::string field, std::string problem) {
  r.problems.emplace_back("", node, std::move(field), std::move(problem));
}

// "node #3": how a message refers to a node whose id cannot name it.
inline std::string node_ordinal(vertex v) { return "node #" + std::to_string(v); }
}  // namespace detail

}  // namespace devpass
