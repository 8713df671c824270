// devpass/graph/structure.hpp — the structural operations every pass uses, over any graph model
// (graph_model.hpp), in three parts: structure_queries.hpp (operands, uses, where values live,
// node lists), structure_mutation.hpp (connect, rewiring, erase and compact, and the descriptor
// rules) and topological_order.hpp (the deterministic order memory planning relies on).
#pragma once

#include "devpass/graph/structure_mutation.hpp"
#include "devpass/graph/structure_queries.hpp"
#include "devpass/graph/topological_order.hpp"
