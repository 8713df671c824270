"""How python/tests is split between pytest-xdist's workers (scripts/test-python runs it with
``-n 2 --dist loadscope``).

Most of these tests' time is exporting and lowering a model, which each test module caches for
the tests that only read the result. Each worker has caches of its own, so the tests that read
one lowering must run in one worker, or both workers pay for it. xdist's own way to say this,
``--dist loadgroup`` with ``xdist_group`` marks, groups nothing under pytest 9.2 (it appends the
group to the node id, which pytest 9.2 no longer lets a plugin do:
https://github.com/pytest-dev/pytest-xdist/issues/1386), so this file gives loadscope's scheduler the groups instead, read off the node id: the test's
name and its parameters. A test that no rule names is a unit of its own, so a renamed test
makes the run slower, never wrong (each worker lowers what it needs).
"""

from __future__ import annotations

import pytest

_CPU_ONLY = "planning: CPU-only models"  # test_transformer_and_vit_... reads all six lowerings

# test function -> its group, from its parameters (the text inside [...]); one rule a line.
GROUPS = {
    # [key-flags] -> the bridge's _lowered(key), and _theirs(key, flags) both policies compare with
    "test_executorch_policy_emits_executorchs_bytes": lambda params: "bridge: " + params.rsplit("-", 1)[0],
    "test_devpass_policy_never_more_copies_and_a_consistent_program": lambda params: "bridge: " + params.rsplit("-", 1)[0],
    # planning's _edge(name, None) and _compared(name, None)
    "test_cpu_models_plan_near_the_bound_and_never_above_greedy": lambda params: _CPU_ONLY,
    "test_transformer_and_vit_save_bytes_and_planning_is_faster_overall": lambda params: _CPU_ONLY,
    "test_mutable_buffers_live_the_whole_method_and_nothing_overlaps_them": lambda params: _CPU_ONLY,
    "test_pte_outputs_equal_greedys": lambda params: _CPU_ONLY,
    # [name-scheme] -> planning's _compared(name, scheme)
    "test_partitioned_models_never_above_greedy_on_any_device": lambda params: "planning: " + params,
    "test_device_aware_planning_with_a_custom_pool_raises_executorchs_error": lambda params: "planning: resnet18-whole",
}


def group_of(nodeid: str) -> str:
    test = nodeid.partition("::")[2]
    name, _, params = test.partition("[")
    rule = GROUPS.get(name)
    return rule(params.removesuffix("]")) if rule else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: without xdist installed, never called
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByLowering(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByLowering(config, log)
