"""An ExecuTorch edge program, after ``to_backend`` / ``to_edge_transform_and_lower``, as a
devpass.graph/1 document (docs/file-format.md): what devpass-opt, devpass-run and the C++ API
read.

The nodes are the ones devpass's pass sees through the bridge (``_fx.FxMethod``), so the file
and the bridge agree on every copy: method inputs (user inputs, lifted parameters, buffers and
constants, each an ``input`` with ``attrs.kind``), delegates on their ``target_device`` with their
output specs and backend, host ops with their aten names as kernels, copies already in the
graph, and the output. Ids are the FX node names.
"""

from __future__ import annotations

import copy
import json
from typing import Dict, Optional

import torch

from ._fx import ROLE, FxMethod, _et, device_name

_DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}
_ROLE_NAME = {code: name for name, code in ROLE.items()}


def _spec_json(spec) -> dict:
    if spec.dtype not in _DTYPES:
        raise ValueError(f"devpass.graph/1 has no dtype for {spec.dtype}")
    return {"dtype": _DTYPES[spec.dtype], "shape": [int(d) for d in spec.shape]}


def _with_specs(graph_module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of the graph with TensorSpecs on every node (what to_executorch's SpecPropPass adds)."""
    from executorch.exir.passes.spec_prop_pass import SpecPropPass

    result = SpecPropPass()(copy.deepcopy(graph_module))
    return result.graph_module


def _input_kinds(exported_program) -> Dict[str, str]:
    kinds: Dict[str, str] = {}
    for spec in exported_program.graph_signature.input_specs:
        name = getattr(spec.arg, "name", None)
        if name is not None:
            kinds[name] = spec.kind.name.lower()
    return kinds


def to_devpass_graph(exported_program, name: str = "forward") -> dict:
    """The document for one method (an ExportedProgram of an edge program)."""
    _, _, _, _, TensorSpec = _et()
    graph_module = _with_specs(exported_program.graph_module)
    method = FxMethod.build(graph_module)
    kinds = _input_kinds(exported_program)

    def reference(value) -> str:
        producer, output = value
        node_id = method.fx_nodes[producer].name
        return node_id if method.output_counts[producer] == 1 and output == 0 else f"{node_id}:{output}"

    nodes = []
    for index, fx_node in enumerate(method.fx_nodes):
        role = _ROLE_NAME[method.roles[index]]
        entry: dict = {"id": fx_node.name, "op": role}
        if method.devices[index] >= 0:
            entry["device"] = device_name(method.devices[index])
        if role in ("delegate", "call"):
            entry["kernel"] = method.kernels[index]
        if method.operands[index]:
            entry["inputs"] = [reference(v) for v in method.operands[index]]
        if role != "output":
            entry["outputs"] = [_spec_json(_value_spec(method, index, k)) for k in range(method.output_counts[index])]
        if role == "input":
            entry["attrs"] = {"kind": kinds.get(fx_node.name, "user_input")}
        if role == "delegate":
            lowered = getattr(graph_module, fx_node.args[0].target)
            entry["attrs"] = {
                "backend": lowered.backend_id,
                "compile_specs": {s.key: s.value.decode("utf-8", "replace") for s in lowered.compile_specs},
            }
        nodes.append(entry)
    return {"format": "devpass.graph/1", "name": name, "nodes": nodes}


def _value_spec(method: FxMethod, index: int, k: int):
    """The spec of value k of node `index`: its FX node's, or, for an output no getitem reads,
    the entry of the producer's tuple of specs."""
    spec = method.spec_of((index, k))
    return spec if spec is not None else method.fx_nodes[index].meta["spec"][k]


def write(document: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(document, f, separators=(",", ":"))
        f.write("\n")


def export_model(
    model: torch.nn.Module, example_inputs: tuple, scheme: str, name: Optional[str] = None, keep_on_host=()
) -> dict:
    """Exports, partitions with DevicePartitioner(scheme, keep_on_host), and converts."""
    from executorch.exir import to_edge_transform_and_lower

    from .partition import DevicePartitioner

    program = torch.export.export(model, example_inputs)
    edge = to_edge_transform_and_lower(program, partitioner=[DevicePartitioner(scheme, keep_on_host=keep_on_host)])
    return to_devpass_graph(edge.exported_program(), name or scheme)
