// tests/graph_dir.hpp — where the test programs find the repository's sample graphs
// (tests/data/graphs): $DEVPASS_GRAPH_DIR when set, so a staged copy of the programs on another
// machine (scripts/gpu-check) reads the graphs it carried along; else the path CMake compiled in.
// planning_path: tests/data/planning, beside the graphs (the intervals of ExecuTorch's planning calls).
#pragma once

#include <cstdlib>
#include <string>

namespace devpass::testing_support {
inline std::string graph_dir() {
  if (const char* from_environment = std::getenv("DEVPASS_GRAPH_DIR")) return from_environment;
  return DEVPASS_GRAPH_DIR;
}
inline std::string graph_path(const std::string& relative) { return graph_dir() + "/" + relative; }
inline std::string planning_path(const std::string& relative) { return graph_dir() + "/../planning/" + relative; }
}  // namespace devpass::testing_support
