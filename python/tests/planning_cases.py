"""The memory-planning test set, shared by python/tests and bench/bench_executorch_planning.py:
torchvision models and two models from torch primitives, random weights (seeded), no downloads.

``MODELS[name](small)`` returns ``(module, example_inputs)``. ``small=True`` gives the inputs the
tests run the .pte on with ExecuTorch's portable kernels (a smaller image where the model takes
any size); the bench plans the full sizes.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class EncoderLayer(nn.Module):
    """Pre-norm self-attention and MLP, written out (no nn.MultiheadAttention)."""

    def __init__(self, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attention = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        x = x + self.proj((attention @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.down(torch.relu(self.up(self.norm2(x))))


class TransformerEncoder(nn.Module):
    def __init__(self, layers: int = 6, d: int = 256, heads: int = 4, ff: int = 1024) -> None:
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d, heads, ff) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class DecoderLayer(nn.Module):
    """Causal self-attention over a KV cache held as buffers the forward mutates (index_put_ at
    the input positions): ExecuTorch's mutable buffers."""

    def __init__(self, d: int, heads: int, max_seq: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.norm1, self.norm2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.up, self.down = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, heads, max_seq, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_seq, self.head_dim))

    def forward(self, x, input_pos, mask):
        b, t, d = x.shape
        h = self.norm1(x)
        split = lambda y: y.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        scores = q @ self.k_cache.transpose(-1, -2) / math.sqrt(self.head_dim)
        attention = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        x = x + self.o((attention @ self.v_cache).transpose(1, 2).reshape(b, t, d))
        return x + self.down(torch.nn.functional.silu(self.up(self.norm2(x))))


class DecoderLM(nn.Module):
    def __init__(self, vocab: int = 512, layers: int = 2, d: int = 128, heads: int = 4, max_seq: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads, max_seq) for _ in range(layers))
        self.norm = nn.RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("positions", torch.arange(max_seq), persistent=False)

    def forward(self, tokens, input_pos):
        mask = self.positions[None, :] <= input_pos[:, None]  # (t, max_seq): causal over the cache
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, input_pos, mask)
        return self.head(self.norm(x))


def _torchvision(name: str):
    def make(small: bool):
        import torchvision

        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        if name == "vit_b_16":
            # torchvision zero-initialises its classification head: the outputs would be zeros
            # whatever the layers under it computed, and a run of the .pte would check nothing.
            nn.init.normal_(model.heads.head.weight, std=0.02)
        # vit_b_16's position embedding fixes 224x224; the convolutional models take any size.
        side = 224 if (name == "vit_b_16" or not small) else 64
        return model, (torch.randn(1, 3, side, side),)

    return make


def _transformer(small: bool):
    torch.manual_seed(0)
    return TransformerEncoder().eval(), (torch.randn(1, 128, 256),)


def _decoder_lm(small: bool):
    torch.manual_seed(0)
    return DecoderLM().eval(), (torch.randint(0, 512, (1, 8)), torch.arange(8))


MODELS = {
    "resnet18": _torchvision("resnet18"),
    "mobilenet_v2": _torchvision("mobilenet_v2"),
    "efficientnet_b0": _torchvision("efficientnet_b0"),
    "vit_b_16": _torchvision("vit_b_16"),
    "transformer": _transformer,
    "decoder_lm": _decoder_lm,
}


# ---- greedy and devpass on the same specs ----


def lower_bound(specs) -> int:
    """The most bytes alive at one step among specs that own storage (storage-backed specs live
    inside their base): no plan of these lifetimes can use less."""
    events = {}
    for spec in specs:
        if spec.storage_base is not None:
            continue
        start, end = spec.lifetime
        events[start] = events.get(start, 0) + spec.allocated_memory
        events[end + 1] = events.get(end + 1, 0) - spec.allocated_memory
    live = peak = 0
    for step in sorted(events):
        live += events[step]
        peak = max(peak, live)
    return peak


class ComparingAlgorithm:
    """A memory planning algorithm that runs ExecuTorch's greedy and devpass's plan_memory on the
    same specs (one call per device bucket: apply_algo's), records both, and returns devpass's
    plan, which the pass then writes and ExecuTorch's verifier checks. Each record: the bucket's
    device, greedy's and devpass's bytes (sum of their bufsizes), the lower bound, seconds."""

    __name__ = "devpass_vs_greedy"

    def __init__(self) -> None:
        self.records = []

    def __call__(self, alignment, specs, graph_module, graph_signature, extra_padding):
        import time

        from executorch.exir.memory_planning import greedy

        import devpass.executorch as dx

        specs = list(specs)
        started = time.perf_counter()
        theirs = greedy(alignment, specs, graph_module, graph_signature, extra_padding)
        between = time.perf_counter()
        ours = dx.plan_memory(alignment, specs, graph_module, graph_signature, extra_padding)
        finished = time.perf_counter()
        device = (specs[0].device.name.lower(), specs[0].device_index) if specs else ("cpu", 0)
        self.records.append(
            {
                "device": "cpu" if device[0] == "cpu" else f"{device[0]}:{device[1]}",
                "specs": len(specs),
                "greedy": sum(theirs.bufsizes),
                "devpass": sum(ours.bufsizes),
                "lower_bound": lower_bound(specs) + extra_padding,
                "greedy_seconds": between - started,
                "devpass_seconds": finished - between,
            }
        )
        return ours


def per_device(records):
    """A method's records summed per device: {device: (devpass, greedy, lower bound) bytes}."""
    out = {}
    for r in records:
        d, g, lb = out.get(r["device"], (0, 0, 0))
        out[r["device"]] = (d + r["devpass"], g + r["greedy"], lb + r["lower_bound"])
    return out


def edge_program(name: str, scheme, small: bool = True, keep_linear: bool = False):
    """The model exported and lowered: CPU-only (scheme None) or partitioned by DevicePartitioner.
    keep_linear: aten.linear kept whole rather than decomposed into permute_copy and addmm (the
    .pte then runs ExecuTorch's optimized linear kernel, not the portable addmm)."""
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    module, inputs = MODELS[name](small)
    with torch.no_grad():  # the decoder's cache buffers: mutated in place, never trained
        exported = torch.export.export(module, inputs)
    partitioner = []
    if scheme is not None:
        from devpass.partition import DevicePartitioner

        partitioner = [DevicePartitioner(scheme)]
    config = EdgeCompileConfig(preserve_ops=[torch.ops.aten.linear.default]) if keep_linear else None
    return to_edge_transform_and_lower(exported, partitioner=partitioner, compile_config=config), inputs


def compare(edge):
    """to_executorch on a copy of `edge` with the comparing algorithm; returns (program, records)."""
    import copy

    import devpass.executorch as dx
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite

    algorithm = ComparingAlgorithm()
    config = dx.backend_config(emit_stacktrace=False)
    config.memory_planning_pass.memory_planning_algo = MemoryPlanningAlgorithmSuite(algo_list=[algorithm])
    program = copy.deepcopy(edge).to_executorch(config)
    return program, algorithm.records
