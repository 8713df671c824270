"""devpass's memory placement as an ExecuTorch memory planning algorithm.

``plan_memory`` has the signature of ``executorch.exir.memory_planning.greedy`` and returns its
``MemoryAlgoResult``, so it goes wherever greedy goes: ``MemoryPlanningAlgorithmSuite([plan_memory])``,
or ``[greedy, plan_memory]`` to keep the smaller plan. The lifetimes and sizes are ExecuTorch's
(its ``TensorSpec``s, as ``apply_algo`` prepared them); the offsets come from devpass's C++
planner (``_devpass.place_intervals``: include/devpass/interop/array_plan.hpp, the placement of
include/devpass/planning/memory_planner.hpp).

What stays ExecuTorch's because ``apply_algo`` does it around the algorithm, as it does around
greedy: which specs are planned (graph inputs, outputs, mutable buffers, dynamic unbound tensors),
the lifetimes, the per-device buckets with ``enable_non_cpu_memory_planning`` (one call per
device; CPU first; mem_ids remapped to global numbers; ``non_const_buffer_device``), the refusal
of custom pools with device tensors, and control-flow submodules (planned first, their arenas
reserved at the bottom of the parent's, ``input_mem_buffer_sizes``).

What this module does as greedy does, so the suite and the emitter see the same kind of result:
specs without a ``mem_id`` go to mem_id 1 and pre-assigned ones (custom pools) to their own
arena; every spec is realigned to ``alignment``; storage-backed specs (``storage_base``, in-place
aliases) are placed inside their base by ExecuTorch's own resolver; ``extra_padding`` is added to
each arena; ``bufsizes`` has one entry per mem_id up to the largest, ``[0, 0]`` when nothing is
planned.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np
import torch
from executorch.exir import ExecutorchBackendConfig
from executorch.exir import memory_planning as mp
from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, Verifier, greedy
from executorch.exir.passes import MemoryPlanningPass

from . import _devpass


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def _checked_lifetime(spec) -> tuple:
    lifetime = getattr(spec, "lifetime", None)
    if (
        not isinstance(lifetime, (list, tuple))
        or len(lifetime) != 2
        or not all(isinstance(step, int) and step >= 0 for step in lifetime)
        or lifetime[0] > lifetime[1]
    ):
        # greedy compares the steps and fails with a TypeError on None; say what is missing.
        raise mp.InternalError(
            f"devpass plan_memory: {spec} has lifetime {lifetime}, not two steps [start <= end]: "
            "memory planning needs update_all_tensors_lifetime (apply_algo runs it) first"
        )
    return lifetime[0], lifetime[1]


def _checked_size(spec) -> int:
    size = spec.allocated_memory
    # A symbolic shape gives a SymInt here; numpy would take some of them silently.
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise mp.InternalError(
            f"devpass plan_memory: {spec} has no static size (allocated_memory is {size!r}, shape "
            f"{tuple(spec.shape)}): a planned tensor needs static or upper-bounded shapes; dynamic "
            "unbound tensors are left to the runtime"
        )
    return size


def plan_memory(
    alignment: int,
    specs,
    graph_module: torch.fx.GraphModule,
    graph_signature=None,
    extra_padding: int = 0,
    *,
    allow_overlapping_allocations: bool = True,
):
    """ExecuTorch's ``greedy`` signature and result, offsets from devpass's planner (module docstring).

    ``allow_overlapping_allocations=False`` (Vulkan's planning) asks for shared objects whose
    members all sit at offset 0 of their object, which an offset plan does not make: that call
    is greedy's own.
    """
    if not allow_overlapping_allocations:
        return mp.greedy(alignment, specs, graph_module, graph_signature, extra_padding, allow_overlapping_allocations=False)
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"devpass plan_memory: alignment must be a power of two, got {alignment}")
    # apply_algo hands a list in node order; a set (tests, other callers) has no stable order,
    # so it is put in lifetime order first: the same graph then gives the same offsets.
    ordered: Sequence = specs if isinstance(specs, (list, tuple)) else sorted(specs, key=lambda s: tuple(_checked_lifetime(s)))

    result = mp.MemoryAlgoResult({}, [])
    placed: List = []
    deferred: List = []  # storage-backed: placed inside their base afterwards, as greedy does
    arena_of: Dict[int, int] = {}  # mem_id -> arena index for the C++ call
    first: List[int] = []
    last: List[int] = []
    size: List[int] = []
    arena: List[int] = []
    for spec in ordered:
        mem_id = 1 if spec.mem_id is None else spec.mem_id
        result.spec_dict[spec] = mp.SpecAllocResult(mem_id, 0, 0)
        spec.realign(alignment)
        start, end = _checked_lifetime(spec)
        nbytes = _checked_size(spec)
        if spec.storage_base is not None:
            deferred.append(spec)
            continue
        placed.append(spec)
        first.append(start)
        last.append(end)
        size.append(nbytes)
        arena.append(arena_of.setdefault(mem_id, len(arena_of)))

    mem_ids = sorted(arena_of, key=arena_of.get)
    planned = _devpass.place_intervals(
        first=np.asarray(first, dtype=np.uint32),
        last=np.asarray(last, dtype=np.uint32),
        size=np.asarray(size, dtype=np.uint64),
        arena=np.asarray(arena, dtype=np.uint32),
        arena_count=len(mem_ids),
        alignment=alignment,
    )
    offsets = planned["offsets"].tolist()
    arena_sizes = planned["arena_sizes"].tolist()

    # Submodules planned first (cond/while/map/scan) own the bottom of each arena.
    reserved = getattr(graph_module, "input_mem_buffer_sizes", None) or []
    base = [_align(reserved[m], alignment) if m < len(reserved) else 0 for m in mem_ids]

    spec2obj = _shared_objects(placed, offsets, arena, first, last, size, base, mem_ids, result)
    # ExecuTorch's resolver: it finds the base's allocation in its object, checks that the alias
    # fits inside the base and is aligned, and raises ExecuTorch's errors for chains it cannot
    # resolve (a base that is not planned, a cycle).
    mp._resolve_storage_base_specs(deferred, spec2obj, result)
    for sobj in {id(o): o for o in spec2obj.values()}.values():
        for alloc in sobj.allocations:
            alloc_result = result.spec_dict[alloc.spec]
            alloc_result.mem_obj_id = sobj.idx
            alloc_result.mem_offset = sobj.offset + alloc.offset

    if not mem_ids:
        result.bufsizes = [0, 0]
    else:
        bufsizes = [0] * (max(mem_ids) + 1)
        for a, mem_id in enumerate(mem_ids):
            bufsizes[mem_id] = base[a] + arena_sizes[a] + extra_padding
        result.bufsizes = bufsizes
    return result


def _shared_objects(placed, offsets, arena, first, last, size, base, mem_ids, result) -> Dict:
    """ExecuTorch's SharedObjects for the plan: in each arena, the runs of offsets where values
    share bytes. ExecuTorch's Verifier requires two specs whose bytes overlap to have one
    ``mem_obj_id``, so a run is one object; ``_resolve_storage_base_specs`` reads them too."""
    spec2obj: Dict = {}
    by_arena: Dict[int, List[int]] = {}
    for i, a in enumerate(arena):
        by_arena.setdefault(a, []).append(i)
    for a, members in by_arena.items():
        members.sort(key=lambda i: (offsets[i], i))
        objects: List = []
        end = -1  # the current run's end; a value starting below it shares bytes with the run
        for i in members:
            stop = offsets[i] + size[i]  # allocated_memory: aligned by realign()
            if not objects or offsets[i] >= end:
                objects.append(mp.SharedObject(len(objects), base[a] + offsets[i], 0, first[i], last[i]))
                end = offsets[i]
            sobj = objects[-1]
            end = max(end, stop)
            sobj.size = base[a] + end - sobj.offset
            sobj.first_used_index = min(sobj.first_used_index, first[i])
            sobj.last_used_index = max(sobj.last_used_index, last[i])
            sobj.allocations.append(mp.AllocationSpec(base[a] + offsets[i] - sobj.offset, placed[i]))
            spec2obj[placed[i]] = sobj
            result.spec_dict[placed[i]].mem_id = mem_ids[a]
    return spec2obj


class DevpassMemoryPlanningPass(MemoryPlanningPass):
    """ExecuTorch's MemoryPlanningPass with devpass's algorithm, whose every plan ExecuTorch's
    Verifier checks (``verify_storage_reuse``: no two tensors alive together share a byte).
    ExecuTorch's pass runs that check only for an algorithm named ``greedy``; a plan made
    elsewhere deserves it as much. ``verify=False`` skips it (it is quadratic in the tensors)."""

    def __init__(self, *, with_greedy: bool = False, verify: bool = True, **kwargs) -> None:
        if "memory_planning_algo" in kwargs:
            raise TypeError("memory_planning_pass: the algorithm is devpass's; use MemoryPlanningPass for another")
        algos = [greedy, plan_memory] if with_greedy else [plan_memory]
        super().__init__(memory_planning_algo=MemoryPlanningAlgorithmSuite(algo_list=algos), **kwargs)
        self.verify = verify

    def run(self, graph_module: torch.fx.GraphModule, graph_signature=None):
        result = super().run(graph_module, graph_signature)
        if self.verify:
            Verifier(
                graph_module,
                self.alloc_graph_input,
                self.alloc_graph_output,
                self.alloc_mutable_buffers and not self.share_mutable_buffers,
                graph_signature,
            ).verify_storage_reuse(self.allow_lifetime_and_storage_overlap)
        return result


def memory_planning_pass(*, with_greedy: bool = False, verify: bool = True, **kwargs) -> DevpassMemoryPlanningPass:
    """A MemoryPlanningPass planning with devpass (``with_greedy``: greedy too, the smaller plan
    kept). Keywords are MemoryPlanningPass's (alloc_graph_input, alignment, ...)."""
    return DevpassMemoryPlanningPass(with_greedy=with_greedy, verify=verify, **kwargs)


def backend_config(*, with_greedy: bool = False, verify: bool = True, **kwargs) -> ExecutorchBackendConfig:
    """``edge.to_executorch(devpass.executorch.backend_config())``: ExecutorchBackendConfig's
    keywords, its memory planning pass devpass's (``memory_planning_pass`` keywords go to
    ``memory_planning_pass()``: pass ``planning={...}``)."""
    if "memory_planning_pass" in kwargs:
        raise TypeError("backend_config: the memory planning pass is devpass's; give its keywords as planning={...}")
    planning = kwargs.pop("planning", {})
    return ExecutorchBackendConfig(
        memory_planning_pass=memory_planning_pass(with_greedy=with_greedy, verify=verify, **planning), **kwargs
    )
