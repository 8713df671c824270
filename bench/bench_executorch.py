"""ExecuTorch's PropagateDevicePass vs devpass through the Python bridge, on the same graphs, in
one run: torchvision models under the named partitionings, and a synthetic 100k-node edge graph.

Prints JSON lines {"bench","metric","value","unit"} (scripts/bench executorch runs it in the
Python stage's venv); with --copy-table, docs/executorch.md's table of copies instead. Per graph:
  <graph>_executorch_seconds     ExecuTorch's pass (call(), its graph_module.recompile() included)
  <graph>_recompile_seconds      that recompile alone, on the same result (ExecuTorch pays it; the
                                 drop-in leaves it to to_executorch, which recompiles anyway)
  <graph>_devpass_<phase>_seconds  the drop-in's convert (FX -> arrays), propagate (C++), write_back
  <graph>_executorch_over_devpass  ExecuTorch's pass ÷ the drop-in's total, executorch policy
  <graph>_same_result            1 when both leave the same nodes in the same order (executorch policy)
"""

from __future__ import annotations

import copy
import json
import operator
import random
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from executorch.exir import to_edge_transform_and_lower  # noqa: E402
from executorch.exir.delegate import executorch_call_delegate  # noqa: E402
from executorch.exir.passes.propagate_device_pass import PropagateDevicePass as ExecuTorchPass  # noqa: E402
from executorch.exir.passes.spec_prop_pass import SpecPropPass  # noqa: E402
from executorch.exir.tensor import TensorSpec  # noqa: E402

import devpass.executorch as dx  # noqa: E402
from devpass.partition import DevicePartitioner  # noqa: E402


def emit(metric: str, value: float, unit: str) -> None:
    print(json.dumps({"bench": "executorch", "metric": metric, "value": round(value, 6), "unit": unit}), flush=True)


def signature(gm: torch.fx.GraphModule):
    """The graph without node names (copies are named in creation order, which differs): each
    node's op, target and the places of the nodes it reads."""
    place = {n: i for i, n in enumerate(gm.graph.nodes)}
    return [(n.op, str(n.target), tuple(place[a] for a in n.all_input_nodes)) for n in gm.graph.nodes]


def compare(name: str, make_graph) -> None:
    """make_graph() returns a fresh, identical graph module each call (a spec-propagated edge graph)."""
    theirs = make_graph()
    started = time.perf_counter()
    ExecuTorchPass(enable_non_cpu_memory_planning=True).call(theirs)
    their_seconds = time.perf_counter() - started
    recompile = time.perf_counter()
    theirs.recompile()
    recompile_seconds = time.perf_counter() - recompile

    ours = make_graph()
    drop_in = dx.PropagateDevicePass(enable_non_cpu_memory_planning=True, policy="executorch")
    drop_in.call(ours)
    total = sum(drop_in.last_timings.values())
    emit(f"{name}_nodes", len(theirs.graph.nodes), "count")
    emit(f"{name}_executorch_seconds", their_seconds, "s")
    emit(f"{name}_recompile_seconds", recompile_seconds, "s")
    for phase, seconds in drop_in.last_timings.items():
        emit(f"{name}_devpass_{phase}_seconds", seconds, "s")
    emit(f"{name}_executorch_over_devpass", their_seconds / total, "ratio")
    emit(f"{name}_same_result", float(signature(theirs) == signature(ours)), "bool")

    mine = make_graph()
    devpass_policy = dx.PropagateDevicePass(enable_non_cpu_memory_planning=True, policy="devpass")
    devpass_policy.call(mine)
    emit(f"{name}_devpass_policy_seconds", sum(devpass_policy.last_timings.values()), "s")
    census = devpass_policy.last_census["after"]
    their_census = drop_in.last_census["after"]
    emit(f"{name}_copies_executorch_policy", their_census["h2d"] + their_census["d2h"], "count")
    emit(f"{name}_copies_devpass_policy", census["h2d"] + census["d2h"] + 2 * census["d2d"], "count")


def torchvision_graph(model_name: str, scheme: str):
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, model_name)(weights=None).eval()
    edge = to_edge_transform_and_lower(
        torch.export.export(model, (torch.randn(1, 3, 224, 224),)), partitioner=[DevicePartitioner(scheme)]
    )
    specced = SpecPropPass()(copy.deepcopy(edge.exported_program().graph_module)).graph_module
    return lambda: copy.deepcopy(specced)


def _lowered_modules():
    """A LoweredBackendModule on cuda:0 and one on cuda:1, to stand for every delegate."""

    class TwoAdds(torch.nn.Module):
        def forward(self, a, b):
            return (a + b) + b

    edge = to_edge_transform_and_lower(
        torch.export.export(TwoAdds(), (torch.randn(4, 8), torch.randn(4, 8))), partitioner=[DevicePartitioner("two_gpu")]
    )
    gm = edge.exported_program().graph_module
    found = [getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"]
    return found[0], found[1]


def synthetic_graph(nodes: int, seed: int = 1):
    """A model-shaped edge graph of about `nodes` FX nodes: chains of cuda:0 delegates, some host
    ops, a few cuda:1 delegates, weights read by delegates, values read 2-3 times."""
    cuda0, cuda1 = _lowered_modules()

    def make():
        rng = random.Random(seed)
        root = torch.nn.Module()
        root.lowered_cuda0, root.lowered_cuda1 = cuda0, cuda1
        graph = torch.fx.Graph()

        def spec():
            return TensorSpec.from_tensor(torch.empty(4, 8))

        def placeholder(name):
            node = graph.placeholder(name)
            node.meta["spec"] = spec()
            return node

        steps = nodes // 3
        weights = [placeholder(f"w{k}") for k in range(steps // 12)]
        recent = [placeholder("x")]
        next_weight = 0
        for _ in range(steps):
            reads = [recent[-1]]
            if rng.random() < 0.25 and len(recent) > 4:
                reads.append(recent[-rng.randint(2, min(len(recent), 12))])
            kind = rng.random()
            if kind < 0.22:
                node = graph.call_function(torch.ops.aten.add.Tensor, (reads[0], reads[-1]))
                node.meta["spec"] = spec()
            else:
                if next_weight < len(weights) and rng.random() < 0.08:
                    reads.append(weights[next_weight])
                    next_weight += 1
                attr = graph.get_attr("lowered_cuda1" if kind > 0.92 else "lowered_cuda0")
                call = graph.call_function(executorch_call_delegate, (attr, *reads))
                call.meta["spec"] = (spec(),)
                node = graph.call_function(operator.getitem, (call, 0))
                node.meta["spec"] = call.meta["spec"][0]  # the same object, as to_backend leaves it
            recent.append(node)
            if len(recent) > 16:
                recent.pop(0)
        out = graph.output(tuple(recent[-3:]))
        out.meta["spec"] = tuple(n.meta["spec"] for n in recent[-3:])
        return torch.fx.GraphModule(root, graph)

    return make


COPY_TABLE_ROWS = [
    ("resnet18", "whole", ()),
    ("resnet18", "per_op", ()),
    ("resnet18", "two_gpu", ()),
    ("resnet18", "per_op", ("aten.add.Tensor",)),
    ("resnet18", "two_gpu", ("aten.add.Tensor",)),
    ("mobilenet_v2", "whole", ()),
    ("mobilenet_v2", "per_op", ()),
    ("mobilenet_v2", "two_gpu", ()),
    ("mobilenet_v2", "per_op", ("aten.add.Tensor",)),
    ("vit_b_16", "whole", ()),
    ("vit_b_16", "two_gpu", ()),
]


def copy_table() -> None:
    """docs/executorch.md's table: copies in what to_executorch() emits, both policies."""
    import torchvision
    from executorch.exir import ExecutorchBackendConfig

    def emitted(manager):
        gm = manager.exported_program().graph_module
        count = lambda op: sum(1 for n in gm.graph.nodes if n.op == "call_function" and n.target == op)  # noqa: E731
        return count(torch.ops.et_copy._h2d_copy.out), count(torch.ops.et_copy._d2h_copy.out)

    print("| model | partitioning | delegates | ExecuTorch (h2d + d2h) | devpass (h2d + d2h emitted) | devpass's census |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for model_name, scheme, host in COPY_TABLE_ROWS:
        torch.manual_seed(0)
        model = getattr(torchvision.models, model_name)(weights=None).eval()
        edge = to_edge_transform_and_lower(
            torch.export.export(model, (torch.randn(1, 3, 224, 224),)),
            partitioner=[DevicePartitioner(scheme, keep_on_host=host)],
        )
        config = lambda: ExecutorchBackendConfig(emit_stacktrace=False)  # noqa: E731
        theirs = copy.deepcopy(edge).to_executorch(config())
        with dx.installed("executorch"):
            same = copy.deepcopy(edge).to_executorch(config()).buffer == theirs.buffer
        with dx.installed("devpass") as passes:
            ours = copy.deepcopy(edge).to_executorch(config())
        delegates = sum(1 for n in edge.exported_program().graph.nodes if n.op == "call_function" and n.target == executorch_call_delegate)
        census = ", ".join(f"{k} {v}" for k, v in passes[0].last_census["after"].items() if v)
        label = scheme + (", adds on the host" if host else "")
        (h, d), (oh, od) = emitted(theirs), emitted(ours)
        print(f"| {model_name} | {label} | {delegates} | {h} + {d} | {oh} + {od} | {census} |" + ("" if same else " (bytes differ!)"), flush=True)


def main(argv) -> int:
    if len(argv) > 1 and argv[1] == "--copy-table":
        copy_table()
        return 0
    only = argv[1] if len(argv) > 1 else ""
    cases = [
        ("resnet18_per_op", lambda: torchvision_graph("resnet18", "per_op")),
        ("resnet18_two_gpu", lambda: torchvision_graph("resnet18", "two_gpu")),
        ("mobilenet_v2_two_gpu", lambda: torchvision_graph("mobilenet_v2", "two_gpu")),
        ("synthetic_100k", lambda: synthetic_graph(100_000)),
    ]
    for name, factory in cases:
        if only in name:
            compare(name, factory())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
