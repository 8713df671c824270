"""An ExecuTorch edge graph (torch.fx) seen as a devpass method: nodes, values and operands as
arrays for the C++ pass (include/devpass/interop/array_graph.hpp), and the way back from
devpass's node and value numbers to FX nodes and argument positions.

What becomes what (the mapping ExecuTorch's PropagateDevicePass reads the same graph with):
- a placeholder with a TensorSpec: ``input`` (lifted parameters and buffers too: ExecuTorch's
  skip_h2d applies to every placeholder);
- ``executorch_call_delegate``: ``delegate`` on the device of its ``target_device`` CompileSpec
  (host when it has none), one value per entry of its tuple of specs; its operands are the
  positional arguments after the lowered module that carry a TensorSpec;
- ``operator.getitem`` of a node with several values: not a node, that node's value;
- ``et_copy._h2d_copy`` / ``_d2h_copy`` already in the graph: the copies;
- any other call: ``call`` (a host kernel named by its target), its operands every FX node with a
  value among its arguments, nested lists included, in ``map_arg`` order;
- the output node: ``output``.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
from torch.fx.node import map_arg

from . import _devpass

ROLE = {name: code for code, name in enumerate(_devpass.ROLES)}
HOST = _devpass.HOST
UNMARKED = _devpass.UNMARKED

Value = Tuple[int, int]  # (devpass node, output)


@functools.lru_cache(maxsize=None)
def _et():
    """ExecuTorch's pieces, imported when first needed (the package imports without them)."""
    import executorch.exir.passes._device_copy_ops_registry  # noqa: F401  (registers et_copy)
    import executorch.exir.schema as schema
    from executorch.exir.delegate import executorch_call_delegate
    from executorch.exir.lowered_backend_module import LoweredBackendModule
    from executorch.exir.passes import propagate_device_pass
    from executorch.exir.tensor import TensorSpec

    return schema, executorch_call_delegate, LoweredBackendModule, propagate_device_pass, TensorSpec


def op_name(target) -> str:
    """An op's aten name, "aten.amax.default", for torch ops and ExecuTorch's edge ops alike
    (whose str() is "<EdgeOpOverload: aten.amax.default>: schema = ...")."""
    text = str(target)
    return getattr(target, "__name__", text) if text.startswith("<") else text


def device_code(device_type, device_index: int) -> int:
    """A schema.DeviceType and index as devpass's device code: -1 the host, k cuda:k."""
    schema = _et()[0]
    if device_type == schema.DeviceType.CPU:
        return HOST
    if device_type == schema.DeviceType.CUDA:
        return int(device_index)
    raise ValueError(f"devpass places values on cpu and cuda devices only, not {device_type.name}")


def device_of_code(code: int):
    schema = _et()[0]
    return (schema.DeviceType.CPU, 0) if code < 0 else (schema.DeviceType.CUDA, int(code))


def device_name(code: int) -> str:
    return "cpu" if code < 0 else f"cuda:{code}"


def delegate_device(graph_module: torch.fx.GraphModule, node: torch.fx.Node) -> Tuple[int, object]:
    """The device a delegate call runs on, and its LoweredBackendModule; ExecuTorch's errors."""
    _, _, LoweredBackendModule, et_pass, _ = _et()
    lowered = None
    if node.args and isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "get_attr":
        candidate = getattr(graph_module, node.args[0].target, None)
        if isinstance(candidate, LoweredBackendModule):
            lowered = candidate
    if lowered is None:
        raise RuntimeError(
            f"executorch_call_delegate node '{node.name}' does not reference "
            "a valid LoweredBackendModule. The first argument must be a "
            "get_attr node pointing to a LoweredBackendModule attribute."
        )
    return _lowered_device(lowered), lowered


def _lowered_device(lowered) -> int:
    # Delegates of one backend module share its compile specs: parsed once per module.
    cached = getattr(lowered, "_devpass_device", None)
    if cached is not None and cached[0] is lowered.compile_specs:
        return cached[1]
    found = _et()[3]._get_target_device_from_compile_specs(lowered)
    code = HOST if found is None else device_code(*found)
    lowered._devpass_device = (lowered.compile_specs, code)
    return code


@dataclass
class FxMethod:
    """One method's FX graph as devpass arrays, and the way back."""

    graph_module: torch.fx.GraphModule
    fx_nodes: List[torch.fx.Node] = field(default_factory=list)  # per devpass node
    roles: List[int] = field(default_factory=list)
    devices: List[int] = field(default_factory=list)
    output_counts: List[int] = field(default_factory=list)
    kernels: List[str] = field(default_factory=list)
    operands: List[List[Value]] = field(default_factory=list)
    # For a delegate: per slot, the index into node.args it came from.
    delegate_arg_positions: Dict[int, List[int]] = field(default_factory=dict)
    value_of: Dict[torch.fx.Node, Value] = field(default_factory=dict)  # FX node -> its value
    value_node: Dict[Value, torch.fx.Node] = field(default_factory=dict)  # value -> FX node holding it
    index_of: Dict[torch.fx.Node, int] = field(default_factory=dict)  # FX node -> devpass node
    position: Dict[torch.fx.Node, int] = field(default_factory=dict)  # FX node -> place in graph order
    first_value: List[int] = field(default_factory=list)

    @staticmethod
    def build(graph_module: torch.fx.GraphModule) -> "FxMethod":
        schema, call_delegate, LoweredBackendModule, _, TensorSpec = _et()
        h2d = torch.ops.et_copy._h2d_copy.default
        d2h = torch.ops.et_copy._d2h_copy.default
        m = FxMethod(graph_module)

        def add(node, role, device, outputs, operands, kernel=""):
            index = len(m.fx_nodes)
            m.fx_nodes.append(node)
            m.roles.append(ROLE[role])
            m.devices.append(device)
            m.output_counts.append(outputs)
            m.operands.append(operands)
            m.kernels.append(kernel)
            m.index_of[node] = index
            if outputs == 1 and isinstance(node.meta.get("spec"), TensorSpec):
                m.value_of[node] = (index, 0)
                m.value_node[(index, 0)] = node
            return index

        def spec_device(spec) -> int:
            return device_code(spec.device, spec.device_index)

        def flat_operands(node) -> List[Value]:
            found: List[Value] = []

            def visit(arg):
                if arg in m.value_of:
                    found.append(m.value_of[arg])
                return arg

            map_arg((node.args, node.kwargs), visit)
            return found

        for position, node in enumerate(graph_module.graph.nodes):
            m.position[node] = position
            spec = node.meta.get("spec")
            if node.op == "placeholder":
                if isinstance(spec, TensorSpec):
                    add(node, "input", HOST, 1, [])
            elif node.op == "get_attr":
                if isinstance(getattr(graph_module, node.target, None), LoweredBackendModule):
                    continue
                if isinstance(spec, TensorSpec):
                    add(node, "constant", HOST, 1, [])
            elif node.op == "output":
                add(node, "output", HOST, 0, flat_operands(node))
            elif node.op == "call_function" and node.target == call_delegate:
                device, lowered = delegate_device(graph_module, node)
                slots, positions = [], []
                for i, arg in enumerate(node.args[1:], start=1):
                    if isinstance(arg, torch.fx.Node) and arg in m.value_of:
                        slots.append(m.value_of[arg])
                        positions.append(i)
                outputs = len(spec) if isinstance(spec, (tuple, list)) else (1 if isinstance(spec, TensorSpec) else 0)
                index = add(node, "delegate", device, outputs, slots, lowered.backend_id)
                m.delegate_arg_positions[index] = positions
            elif node.op == "call_function" and node.target == operator.getitem:
                source, k = node.args[0], node.args[1]
                if (
                    isinstance(source, torch.fx.Node)
                    and source in m.index_of
                    and isinstance(k, int)
                    and 0 <= k < m.output_counts[m.index_of[source]]
                    and isinstance(spec, TensorSpec)
                ):
                    value = (m.index_of[source], k)
                    m.value_of[node] = value
                    m.value_node.setdefault(value, node)
                else:
                    add(node, "call", HOST, 1 if isinstance(spec, TensorSpec) else 0, flat_operands(node), "getitem")
            elif node.op == "call_function" and node.target in (h2d, d2h):
                operands = flat_operands(node)
                if node.target == h2d:
                    device = spec_device(spec) if isinstance(spec, TensorSpec) else HOST
                else:
                    source = node.args[0]
                    source_spec = source.meta.get("spec") if isinstance(source, torch.fx.Node) else None
                    device = spec_device(source_spec) if isinstance(source_spec, TensorSpec) else HOST
                add(node, "h2d_copy" if node.target == h2d else "d2h_copy", device, 1, operands, op_name(node.target))
            else:  # a host op (call_function, call_method, call_module)
                outputs = len(spec) if isinstance(spec, (tuple, list)) else (1 if isinstance(spec, TensorSpec) else 0)
                add(node, "call", HOST, outputs, flat_operands(node), op_name(node.target))

        total = 0
        for count in m.output_counts:
            m.first_value.append(total)
            total += count
        return m

    def spec_of(self, value: Value):
        """The TensorSpec the value's FX node carries (the getitem's, or the node's own)."""
        node = self.value_node.get(value)
        return node.meta.get("spec") if node is not None else None

    def initial_marks(self) -> np.ndarray:
        """Values already on a device before the pass: method inputs the caller stages there."""
        _, _, _, _, TensorSpec = _et()
        marks = np.full(self.first_value[-1] + self.output_counts[-1] if self.roles else 0, UNMARKED, dtype=np.int32)
        for index, role in enumerate(self.roles):
            if role in (ROLE["input"], ROLE["constant"]):
                spec = self.spec_of((index, 0))
                if isinstance(spec, TensorSpec) and device_code(spec.device, spec.device_index) != HOST:
                    marks[self.first_value[index]] = device_code(spec.device, spec.device_index)
        return marks

    def arrays(self) -> dict:
        """The arguments of _devpass.propagate that describe the graph."""
        offsets = np.zeros(len(self.roles) + 1, dtype=np.uint32)
        np.cumsum([len(o) for o in self.operands], out=offsets[1:])
        flat = [value for slots in self.operands for value in slots]
        return {
            "roles": np.asarray(self.roles, dtype=np.uint8),
            "devices": np.asarray(self.devices, dtype=np.int32),
            "output_counts": np.asarray(self.output_counts, dtype=np.uint32),
            "operand_offsets": offsets,
            "operand_nodes": np.asarray([v[0] for v in flat], dtype=np.uint32),
            "operand_outputs": np.asarray([v[1] for v in flat], dtype=np.uint32),
            "value_marks": self.initial_marks(),
            "names": [n.name for n in self.fx_nodes],
        }

    def replace_operands(self, index: int, replacements: Dict[int, torch.fx.Node]) -> None:
        """Points slots of devpass node `index` at other FX nodes (slot -> node)."""
        node = self.fx_nodes[index]
        if index in self.delegate_arg_positions:
            args = list(node.args)
            for slot, new in replacements.items():
                args[self.delegate_arg_positions[index][slot]] = new
            node.args = tuple(args)
            return
        counter = [0]

        def visit(arg):
            if arg in self.value_of:
                slot = counter[0]
                counter[0] += 1
                return replacements.get(slot, arg)
            return arg

        new_args, new_kwargs = map_arg((node.args, node.kwargs), visit)
        node.args, node.kwargs = new_args, new_kwargs
