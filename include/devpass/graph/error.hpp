// devpass/graph/error.hpp — the one error type for bad graphs and bad files.
// Its message has the form `file: node 'id': field: what is wrong`, omitting the parts that are
// unknown (no file for an in-memory graph, no node for a top-level field).
#pragma once

#include <stdexcept>
#include <string>

#include "devpass/graph/concat.hpp"

namespace devpass {

class graph_error : public std::runtime_error {
 public:
  graph_error(std::string file, std::string node, std::string field, std::string problem)
      : std::runtime_error(compose(file, node, field, problem)),
        file_(std::move(file)),
        node_(std::move(node)),
        field_(std::move(field)),
        problem_(std::move(problem)) {}

  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] const std::string& node() const noexcept { return node_; }
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  static std::string compose(const std::string& file, const std::string& node, const std::string& field,
                             const std::string& problem) {
    return concat({file, file.empty() ? "" : ": ", node.empty() ? "" : "node '", node, node.empty() ? "" : "': ", field,
                   field.empty() ? "" : ": ", problem});
  }
  std::string file_, node_, field_, problem_;
};

// A configuration that cannot work (for example a flag that needs another one). Tools exit 2.
class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace devpass
