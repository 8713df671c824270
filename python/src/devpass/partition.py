"""Named device partitionings for exporting real models, on a backend that compiles nothing.

``DevicePartitioner(scheme)`` delegates every tensor op of an edge program (a torchvision model,
say) to ``DevpassRecordingBackend`` with a ``target_device`` CompileSpec, ExecuTorch's
convention, so that ExecuTorch's pass and devpass's see a partitioned graph as a GPU backend's
partitioner would leave it:

- ``whole``: connected runs of ops fused into delegates on cuda:0 (the whole model where it is
  connected);
- ``per_op``: every op its own delegate on cuda:0 (many back-to-back same-device delegates);
- ``two_gpu``: per_op, the first half of the ops on cuda:0 and the second half on cuda:1.

Weights read by one delegate only go into it (``tag_constant_data``); the rest stay method inputs.

The backend's "compiled" blob only names the ops it was given: the program emits (``.pte``)
but cannot run; it is for placement, copies and memory plans.
"""

from __future__ import annotations

import operator
from typing import Dict, Iterable, List, final

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.canonical_partitioners.pattern_op_partitioner import generate_pattern_op_partitions
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from executorch.exir.passes.propagate_device_pass import TARGET_DEVICE_COMPILE_SPEC_KEY
from torch.fx.passes.operator_support import OperatorSupportBase

from ._fx import op_name

SCHEMES = ("whole", "per_op", "two_gpu")


@final
class DevpassRecordingBackend(BackendDetails):
    """Records which ops it was handed; compiles nothing (see the module docstring)."""

    @staticmethod
    def preprocess(edge_program, compile_specs: List[CompileSpec]) -> PreprocessResult:
        ops = [op_name(n.target) for n in edge_program.graph_module.graph.nodes if n.op == "call_function"]
        return PreprocessResult(processed_bytes=("devpass-recording:" + ",".join(ops)).encode())


def _is_tensor(value) -> bool:
    return isinstance(value, torch.Tensor)


def delegable(node: torch.fx.Node) -> bool:
    """A call whose results are all tensors (getitems follow their producer)."""
    if node.op != "call_function" or node.target == operator.getitem:
        return False
    value = node.meta.get("val")
    if _is_tensor(value):
        return True
    return isinstance(value, (tuple, list)) and len(value) > 0 and all(_is_tensor(v) for v in value)


class _Delegable(OperatorSupportBase):
    def __init__(self, keep_on_host) -> None:
        super().__init__()
        self.keep_on_host = keep_on_host

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return delegable(node) and not self.keep_on_host(node)


def _spec(device: str) -> DelegationSpec:
    return DelegationSpec(
        DevpassRecordingBackend.__name__,
        [CompileSpec(TARGET_DEVICE_COMPILE_SPEC_KEY, device.encode("utf-8"))],
    )


class DevicePartitioner(Partitioner):
    def __init__(self, scheme: str = "whole", keep_on_host: Iterable[str] = ()) -> None:
        """keep_on_host: op names (e.g. "aten.amax.default") left to the host, as a backend that
        does not support them would."""
        super().__init__()
        if scheme not in SCHEMES:
            raise ValueError(f"partitioning must be one of {', '.join(SCHEMES)}, not {scheme!r}")
        self.scheme = scheme
        self.host_ops = frozenset(keep_on_host)

    def _keep_on_host(self, node: torch.fx.Node) -> bool:
        return op_name(node.target) in self.host_ops

    def partition(self, exported_program) -> PartitionResult:
        graph = exported_program.graph_module.graph
        tags: Dict[str, DelegationSpec] = {}
        if self.scheme == "whole":
            for partition in generate_pattern_op_partitions(
                exported_program.graph_module, op_support=_Delegable(self._keep_on_host)
            ):
                tag = f"tag{partition.id}"
                for node in partition.nodes:
                    node.meta["delegation_tag"] = tag
                tags[tag] = _spec("cuda:0")
        else:
            ops = [n for n in graph.nodes if delegable(n) and not self._keep_on_host(n)]
            for i, node in enumerate(ops):
                device = "cuda:1" if self.scheme == "two_gpu" and i >= len(ops) // 2 else "cuda:0"
                tag = f"tag{i}"
                node.meta["delegation_tag"] = tag
                for user in node.users:  # a tuple's getitems go with it
                    if user.op == "call_function" and user.target == operator.getitem:
                        user.meta["delegation_tag"] = tag
                tags[tag] = _spec(device)
        # Each delegate owns the weights only it reads, as a GPU backend's would: ExecuTorch 1.5.1
        # cannot emit an h2d copy of a lifted parameter (the copy's spec is a constant without data).
        tag_constant_data(exported_program)
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)
