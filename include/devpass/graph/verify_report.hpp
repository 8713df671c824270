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

  // Records a problem of node `node` (its id; empty for the graph as a whole) in field `field`.
  void add(const std::string& node, std::string field, std::string problem) {
    problems.emplace_back("", node, std::move(field), std::move(problem));
  }

  [[nodiscard]] bool ok() const noexcept { return problems.empty(); }
  // One problem per line, each line ending in '\n'; empty when ok().
  [[nodiscard]] std::string to_string() const {
    std::string text;
    for (const auto& p : problems) (text += p.what()) += '\n';
    return text;
  }
};

// "node #3": how a verifier's message refers to a node whose id cannot name it.
[[nodiscard]] inline std::string node_ordinal(vertex v) { return "node #" + std::to_string(v); }

}  // namespace devpass
