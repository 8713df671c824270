"""devpass as ExecuTorch's device-propagation pass and memory planner.

Memory planning (``_memory_planning``): ``plan_memory``, an algorithm with the signature and
result of ExecuTorch's ``greedy``; ``memory_planning_pass()`` and ``backend_config()``, ready
to hand to ``to_executorch``.

Device propagation:

``PropagateDevicePass`` takes the constructor arguments of ExecuTorch 1.5's
``executorch.exir.passes.propagate_device_pass.PropagateDevicePass`` and raises its errors, plus
``policy``: ``"executorch"`` makes exactly ExecuTorch's copies (the emitted ``.pte`` is byte for
byte ExecuTorch's own), ``"devpass"`` (the default) makes devpass's: one copy per value and
device shared by every consumer, no copy for a value that is never read on the host, and a
device-to-device move as one d2h + h2d pair (ExecuTorch has no device-to-device copy op). The
graph goes to devpass's C++ pipeline as arrays (``_fx.FxMethod``) and the result is written back
as ExecuTorch's later passes need it (see docs/executorch.md, "Writing the result back").

ExecuTorch has no hook for this pass: ``executorch.exir.program._program`` binds the name
``PropagateDevicePass`` when it is imported and ``edge_to_executorch_passes`` calls that name.
``install()`` (or ``with installed(): ...``) rebinds it there, and in the defining module for code
that imports it later. This reaches into ExecuTorch's internals: a release that moves the call
breaks it, which ``install()`` detects (it refuses when the name is not where it expects).
"""

from __future__ import annotations

import contextlib
import gc
import time
from typing import Dict, Iterator, List, Optional

import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from . import _devpass
from ._memory_planning import DevpassMemoryPlanningPass, backend_config, memory_planning_pass, plan_memory  # noqa: F401
from ._fx import HOST, ROLE, UNMARKED, FxMethod, _et, device_of_code

POLICIES = ("devpass", "executorch")


class PropagateDevicePass(PassBase):
    """ExecuTorch's PropagateDevicePass, computed by devpass (module docstring)."""

    def __init__(
        self,
        skip_h2d_for_method_inputs: bool = False,
        skip_d2h_for_method_outputs: bool = False,
        enable_non_cpu_memory_planning: bool = False,
        policy: str = "devpass",
    ) -> None:
        super().__init__()
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.skip_h2d_for_method_inputs = skip_h2d_for_method_inputs
        self.skip_d2h_for_method_outputs = skip_d2h_for_method_outputs
        self.enable_non_cpu_memory_planning = enable_non_cpu_memory_planning
        self.policy = policy
        self.last_timings: Dict[str, float] = {}  # seconds: convert, propagate, write_back
        self.last_census: Dict[str, Dict[str, int]] = {}
        if (skip_h2d_for_method_inputs or skip_d2h_for_method_outputs) and not enable_non_cpu_memory_planning:
            raise ValueError(
                "skip_h2d_for_method_inputs and skip_d2h_for_method_outputs are "
                "only meaningful when enable_non_cpu_memory_planning=True, since "
                "they control host/device copy insertion which only happens during "
                "device-aware memory planning. Set enable_non_cpu_memory_planning="
                "True, or leave the skip options disabled."
            )

    # ExecuTorch raises this one while it inserts copies; devpass's executorch policy refuses the
    # same graphs (naming every consumer), and the drop-in raises ExecuTorch's text first.
    def _check_shared_placeholders(self, method: FxMethod) -> None:
        if not (self.policy == "executorch" and self.enable_non_cpu_memory_planning and self.skip_h2d_for_method_inputs):
            return
        for index, role in enumerate(method.roles):
            if role != ROLE["delegate"] or method.devices[index] == HOST:
                continue
            for slot, (producer, _) in enumerate(method.operands[index]):
                arg = method.fx_nodes[producer]
                if arg.op == "placeholder" and len(arg.users) != 1:
                    raise RuntimeError(
                        f"skip_h2d_for_method_inputs=True requires placeholder "
                        f"'{arg.name}' to have exactly one user, but it has "
                        f"{len(arg.users)} users. The placeholder is shared by "
                        f"multiple consumers, so its TensorSpec cannot be safely "
                        f"mutated in-place to the delegate's device. Either disable "
                        f"skip_h2d_for_method_inputs, or ensure the placeholder is "
                        f"used exclusively by this delegate."
                    )

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        # The pass makes tens of thousands of objects on a big graph, each allocation burst
        # triggering the cyclic collector over every FX node alive (it was half the drop-in's
        # time on a 100k-node graph). Nothing here makes cycles that outlive the pass.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._call(graph_module)
        finally:
            if collecting:
                gc.enable()

    def _call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        started = time.perf_counter()
        method = FxMethod.build(graph_module)
        self._check_shared_placeholders(method)
        arrays = method.arrays()
        converted = time.perf_counter()
        result = _devpass.propagate(
            **arrays,
            policy=self.policy,
            enable_non_cpu_memory_planning=self.enable_non_cpu_memory_planning,
            skip_h2d_for_method_inputs=self.skip_h2d_for_method_inputs,
            skip_d2h_for_method_outputs=self.skip_d2h_for_method_outputs,
        )
        propagated = time.perf_counter()
        changed = _write_back(method, result, self)
        finished = time.perf_counter()
        self.last_timings = {
            "convert": converted - started,
            "propagate": propagated - converted,
            "write_back": finished - propagated,
        }
        self.last_census = {"before": result["before"], "after": result["after"]}
        # No recompile here: ExecuTorch's later passes work on the graph, and to_executorch
        # recompiles once at the end (a recompile per pass is most of this pass's cost on big graphs).
        return PassResult(graph_module, changed)


def _set_device(spec, code: int) -> bool:
    device_type, index = device_of_code(code)
    if spec.device == device_type and spec.device_index == index:
        return False
    spec.device = device_type
    spec.device_index = index
    return True


def _new_spec(source_spec, code: int):
    """A copy's own TensorSpec: sharing the source's would merge the two tensors in the emitter."""
    # copy.copy's result, made directly: TensorSpec has no __copy__, __slots__ or state hooks, and
    # copy.copy's generic reconstruction was 40% of the write-back on a 30k-node graph.
    spec = type(source_spec).__new__(type(source_spec))
    spec.__dict__.update(source_spec.__dict__)
    spec.init_mem_planning_fields()
    device_type, index = device_of_code(code)
    spec.device = device_type
    spec.device_index = index
    return spec


def _write_back(method: FxMethod, r: dict, options: "PropagateDevicePass") -> bool:
    """Applies devpass's result to the FX graph (see docs/executorch.md)."""
    policy = options.policy
    _, _, _, _, TensorSpec = _et()
    graph = method.graph_module.graph
    h2d_op = torch.ops.et_copy._h2d_copy.default
    d2h_op = torch.ops.et_copy._d2h_copy.default
    names = {h2d_op: "_h2d_copy_default", d2h_op: "_d2h_copy_default"}
    n = len(method.fx_nodes)
    changed = False

    # Device tags first: a copy's spec is cloned from its source's, tagged or not.
    for index, fx_node in enumerate(method.fx_nodes):
        for k in range(method.output_counts[index]):
            mark = int(r["value_marks"][method.first_value[index] + k])
            if mark == UNMARKED:
                continue
            spec = method.spec_of((index, k))
            if isinstance(spec, TensorSpec):
                changed |= _set_device(spec, mark)
            # A delegate's outputs are tagged on its tuple of specs too, the objects each getitem
            # holds (a fresh getitem spec would emit a device output as a CPU one).
            own = fx_node.meta.get("spec")
            if isinstance(own, (tuple, list)) and k < len(own) and isinstance(own[k], TensorSpec):
                changed |= _set_device(own[k], mark)

    roles, devices = r["copy_roles"], r["copy_devices"]
    sources, source_outputs = r["copy_source_nodes"], r["copy_source_outputs"]
    copies = len(roles)
    # Where each copy's first reader is (FX position, slot), and whether another copy reads it:
    # an h2d goes right before its first reader, or right after its source when a copy reads it.
    first_read: List[Optional[tuple]] = [None] * copies
    read_by_copy = [False] * copies
    position = method.position
    for node, slot, to in zip(r["rewired_nodes"].tolist(), r["rewired_slots"].tolist(), r["rewired_to_nodes"].tolist()):
        if to >= n:
            here = (position[method.fx_nodes[node]], slot)
            if first_read[to - n] is None or here < first_read[to - n]:
                first_read[to - n] = here
    for source in sources.tolist():
        if source >= n:
            read_by_copy[source - n] = True
    node_at = {place: node for node, place in position.items()}

    made: Dict[int, torch.fx.Node] = {}
    last_after: Dict[torch.fx.Node, torch.fx.Node] = {}

    def source_node(k: int) -> torch.fx.Node:
        s = int(sources[k])
        return method.value_node[(s, int(source_outputs[k]))] if s < n else materialize(s - n)

    def make(target, source: torch.fx.Node, code: int, before: Optional[torch.fx.Node]) -> torch.fx.Node:
        if before is not None:
            context = graph.inserting_before(before)
        else:  # right after the source, after any copy already put there
            anchor = last_after.get(source, source)
            context = graph.inserting_after(anchor)
        with context:
            # The name FX would derive from the target, given: deriving it (a regex per node) was
            # a third of the write-back on a 30k-node graph.
            node = graph.create_node("call_function", target, (source,), name=names[target])
        if before is None:
            last_after[source] = node
        node.meta["spec"] = _new_spec(source.meta["spec"], code)
        node.meta["val"] = source.meta.get("val")
        if "tensor_meta" in source.meta:
            node.meta["tensor_meta"] = source.meta["tensor_meta"]
        return node

    def first_reader(k: int) -> Optional[torch.fx.Node]:
        if first_read[k] is None or read_by_copy[k]:
            return None
        return node_at[first_read[k][0]]

    host_copy_of: Dict[torch.fx.Node, torch.fx.Node] = {}  # a device value's one d2h

    def to_host(source: torch.fx.Node) -> torch.fx.Node:
        if source not in host_copy_of:
            host_copy_of[source] = make(d2h_op, source, HOST, None)
        return host_copy_of[source]

    def materialize(k: int) -> torch.fx.Node:
        if k in made:
            return made[k]
        source = source_node(k)
        role = int(roles[k])
        code = int(devices[k])
        if role == ROLE["d2h_copy"]:
            node = to_host(source) if policy == "devpass" else make(d2h_op, source, HOST, None)
        elif role == ROLE["h2d_copy"]:
            node = make(h2d_op, source, code, first_reader(k))
        else:
            # d2d: ExecuTorch has no device-to-device copy, so through the host, staged in the
            # value's one d2h (the one its host readers get, if any): a d2h apiece would make
            # more copies than ExecuTorch's own pass.
            node = make(h2d_op, to_host(source), code, first_reader(k))
        made[k] = node
        return node

    # d2h copies sit right after what they copy; h2d copies right before their first reader, in
    # reader order then slot order: ExecuTorch's own places, so its memory plan comes out the same.
    d2h_role = ROLE["d2h_copy"]
    role_list = roles.tolist()
    order = sorted(
        range(copies),
        key=lambda k: (0, 0, 0, k) if role_list[k] == d2h_role else (1, *(first_read[k] or (-1, 0)), k),
    )
    for k in order:
        materialize(k)
    changed |= copies > 0

    replacements: Dict[int, Dict[int, torch.fx.Node]] = {}
    for node, slot, to, output in zip(r["rewired_nodes"], r["rewired_slots"], r["rewired_to_nodes"], r["rewired_to_outputs"]):
        to = int(to)
        new = made[to - n] if to >= n else method.value_node[(to, int(output))]
        replacements.setdefault(int(node), {})[int(slot)] = new
    for node, slots in replacements.items():
        method.replace_operands(node, slots)
        changed = True

    for index in r["erased_nodes"]:
        graph.erase_node(method.fx_nodes[int(index)])
        changed = True
    if policy == "executorch" and options.enable_non_cpu_memory_planning and not options.skip_d2h_for_method_outputs:
        changed |= _unread_delegate_outputs_get_a_d2h(method, make, d2h_op)
    # ExecuTorch sweeps dead code after it elides a round trip; its policy does the same. The
    # sweep removes nothing unless some node is unused (removal only ever starts there), and
    # the check is a twentieth of the sweep on a 100k-node graph.
    if policy == "executorch" and r["copies_removed"] > 0:
        if any(not node.users and node.op not in ("placeholder", "output") for node in graph.nodes):
            graph.eliminate_dead_code()
    if policy == "devpass":
        changed |= _refresh_output_spec(method)
    return changed


def _unread_delegate_outputs_get_a_d2h(method: FxMethod, make, d2h_op) -> bool:
    """ExecuTorch's phase 2 puts a d2h after every getitem of a device delegate, read or not; the
    C++ policy copies only what is read. An unread getitem's d2h is dead, and ExecuTorch's sweep
    removes both when a round trip was elided, so the write-back makes it only to be swept or,
    when nothing was elided, to stay, as in ExecuTorch's graph. (With skip_d2h ExecuTorch skips
    it: an unread getitem feeds only the output, vacuously.)"""
    made = False
    for node, value in list(method.value_of.items()):
        producer = method.fx_nodes[value[0]]
        if (
            node is not producer
            and not node.users
            and method.roles[value[0]] == ROLE["delegate"]
            and method.devices[value[0]] != HOST
        ):
            make(d2h_op, node, HOST, None)
            made = True
    return made


def _refresh_output_spec(method: FxMethod) -> bool:
    """The output node's specs are the specs of what it returns now. ExecuTorch leaves them as
    SpecPropPass made them, the specs of the values before their d2h copies: with
    MemoryPlanningPass(alloc_graph_output=False) the planner then leaves the device tensor
    unplanned and plans the host copy the caller was to provide."""
    _, _, _, _, TensorSpec = _et()
    output = next((node for node in reversed(method.graph_module.graph.nodes) if node.op == "output"), None)
    if output is None or not output.args:
        return False
    returned, old = output.args[0], output.meta.get("spec")
    if not (isinstance(returned, (tuple, list)) and isinstance(old, (tuple, list)) and len(returned) == len(old)):
        return False
    new = [
        value.meta["spec"] if isinstance(value, torch.fx.Node) and isinstance(value.meta.get("spec"), TensorSpec) else kept
        for value, kept in zip(returned, old)
    ]
    if all(a is b for a, b in zip(new, old)):
        return False
    output.meta["spec"] = type(old)(new)
    return True


def _program_module():
    from executorch.exir.program import _program

    return _program


_installed_stack: List[tuple] = []


class _Configured:
    """What ExecuTorch's pipeline constructs: devpass's pass with a fixed policy."""

    def __init__(self, policy: str, calls: List[PropagateDevicePass]) -> None:
        self.policy = policy
        self.calls = calls

    def __call__(self, **kwargs) -> PropagateDevicePass:
        made = PropagateDevicePass(**kwargs, policy=self.policy)
        self.calls.append(made)
        return made


def install(policy: str = "devpass") -> List[PropagateDevicePass]:
    """Makes ExecuTorch's ``to_executorch`` run devpass's pass. Returns the list every pass
    ExecuTorch constructs from now on is appended to (to read timings and censuses)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    program = _program_module()
    _, _, _, et_pass, _ = _et()
    current = getattr(program, "PropagateDevicePass", None)
    if current is None or not callable(current):
        raise RuntimeError(
            "executorch.exir.program._program has no PropagateDevicePass to replace: this ExecuTorch "
            "release calls the pass differently (devpass is tested with executorch 1.5.1)"
        )
    calls: List[PropagateDevicePass] = []
    factory = _Configured(policy, calls)
    _installed_stack.append((current, et_pass.PropagateDevicePass))
    program.PropagateDevicePass = factory
    et_pass.PropagateDevicePass = factory
    return calls


def uninstall() -> None:
    """Puts back what the last ``install()`` replaced."""
    if not _installed_stack:
        return
    program_pass, module_pass = _installed_stack.pop()
    _program_module().PropagateDevicePass = program_pass
    _et()[3].PropagateDevicePass = module_pass


@contextlib.contextmanager
def installed(policy: str = "devpass") -> Iterator[List[PropagateDevicePass]]:
    """``with installed("executorch") as passes: program.to_executorch(...)``"""
    calls = install(policy)
    try:
        yield calls
    finally:
        uninstall()
