"""devpass.export / devpass-export: an edge program as devpass.graph/1, and the file agrees with
the bridge: devpass-opt on the exported file makes exactly the copies devpass's pass makes inside
``to_executorch()`` on the same program, under both policies and the skip flags.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import subprocess

import pytest
import torch
from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
from executorch.exir.passes.propagate_device_pass import PropagateDeviceConfig

import devpass.executorch as dx
from devpass.export import export_model, to_devpass_graph
from devpass.export_cli import main as export_main
from devpass.partition import SCHEMES, DevicePartitioner


class Block(torch.nn.Module):
    """Convolutions with a host op (a max) between device regions, a residual and two outputs."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 4, 1)

    def forward(self, x, y):
        a = torch.relu(self.conv(x))
        b = self.conv2(a) + a
        return b * y, torch.amax(b, dim=1)


def _inputs():
    return (torch.randn(1, 3, 8, 8), torch.randn(1, 4, 8, 8))


HOST_OPS = ("aten.amax.default", "aten.mul.Tensor")  # what this pretend backend cannot run


@functools.lru_cache(maxsize=None)
def _edge(scheme):
    """Exported and lowered once per scheme: the tests only read it, or take a deep copy to emit."""
    partitioner = DevicePartitioner(scheme, keep_on_host=HOST_OPS)
    return to_edge_transform_and_lower(torch.export.export(Block(), _inputs()), partitioner=[partitioner])


@pytest.mark.parametrize("scheme", SCHEMES)
def test_document_is_devpass_graph_1(scheme):
    document = to_devpass_graph(_edge(scheme).exported_program(), f"block.{scheme}")
    assert document["format"] == "devpass.graph/1" and document["name"] == f"block.{scheme}"
    ids = [n["id"] for n in document["nodes"]]
    assert len(ids) == len(set(ids))
    ops = [n["op"] for n in document["nodes"]]
    assert ops.count("output") == 1 and "delegate" in ops
    inputs = {n["id"]: n["attrs"]["kind"] for n in document["nodes"] if n["op"] == "input"}
    assert inputs["x"] == "user_input" and inputs["y"] == "user_input"
    for node in document["nodes"]:
        if node["op"] == "delegate":
            assert node["device"] in ("cuda:0", "cuda:1")
            assert node["attrs"]["compile_specs"]["target_device"] == node["device"]
            assert node["outputs"] and all(o["dtype"] == "float32" for o in node["outputs"])
    # Host ops keep their aten names.
    assert sorted(n["kernel"] for n in document["nodes"] if n["op"] == "call") == sorted(HOST_OPS)
    if scheme == "two_gpu":
        assert {n["device"] for n in document["nodes"] if n["op"] == "delegate"} == {"cuda:0", "cuda:1"}


def _opt_census(path, *flags):
    opt = os.environ.get("DEVPASS_OPT")
    if not opt:
        pytest.skip("DEVPASS_OPT (devpass-opt's path) is not set: scripts/test-python sets it")
    done = subprocess.run([opt, "--propagate-device", "--stats", *flags, path, "-o", os.devnull], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    last = [line for line in done.stderr.splitlines() if line.startswith("copies:")][-1]
    h2d, d2h, d2d = (int(x) for x in re.findall(r"(?:h2d|d2h|d2d) (\d+)", last))
    # The resident copies (constants loaded once) have a line of their own, when there are any.
    resident = [int(m.group(1)) for line in done.stderr.splitlines() if (m := re.match(r"resident: (\d+) cop", line))]
    return {"h2d": h2d, "d2h": d2h, "d2d": d2d, "resident": resident[-1] if resident else 0}


FLAG_SETS = {
    "default": ([], {}),
    "skip_h2d": (["--skip-h2d-for-method-inputs"], dict(skip_h2d_for_method_inputs=True)),
    "skip_both": (
        ["--skip-h2d-for-method-inputs", "--skip-d2h-for-method-outputs"],
        dict(skip_h2d_for_method_inputs=True, skip_d2h_for_method_outputs=True),
    ),
}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("policy", ["devpass", "executorch"])
@pytest.mark.parametrize("flags", list(FLAG_SETS))
def test_devpass_opt_on_the_file_makes_the_bridges_copies(tmp_path, scheme, policy, flags):
    edge = _edge(scheme)
    path = str(tmp_path / "block.json")
    with open(path, "w") as f:
        json.dump(to_devpass_graph(edge.exported_program()), f)
    opt_flags, config = FLAG_SETS[flags]
    expected = _opt_census(path, f"--policy={policy}", *opt_flags)
    with dx.installed(policy) as passes:
        copy.deepcopy(edge).to_executorch(
            ExecutorchBackendConfig(emit_stacktrace=False, propagate_device_config=PropagateDeviceConfig(**config))
        )
    assert len(passes) == 1
    assert passes[0].last_census["after"] == expected


def test_export_model_and_the_command_line(tmp_path):
    path = tmp_path / "resnet18.per_op.json"
    assert export_main(["resnet18", "--partition", "per_op", "-o", str(path)]) == 0
    document = json.loads(path.read_text())
    assert document["name"] == "resnet18.per_op"
    delegates = [n for n in document["nodes"] if n["op"] == "delegate"]
    assert len(delegates) > 40 and all(n["device"] == "cuda:0" for n in delegates)
    assert document == export_model(*_resnet18(), "per_op", name="resnet18.per_op")  # deterministic


def _resnet18():
    import torchvision

    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None).eval(), (torch.randn(1, 3, 224, 224),)
