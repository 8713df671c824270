"""A pytest plugin: runs a test session with devpass's planner in place of ExecuTorch's greedy
memory planning algorithm, and fails the session if the planner never ran (so a passing run
cannot mean "greedy ran").

    python -m pytest -p devpass_planner_in_place <executorch>/exir/tests/test_memory_planning.py

``executorch.exir.memory_planning.greedy`` is rebound before the test file is imported, so its
``from executorch.exir.memory_planning import greedy`` and ``MemoryPlanningAlgorithmSuite()``'s
default both get devpass's planner. The stand-in is named ``greedy``: ExecuTorch's
MemoryPlanningPass then runs its storage-reuse verifier on every plan it makes, as it does for
greedy's own.
"""

import functools

_state = {"calls": 0, "original": None}


def pytest_configure(config):
    from executorch.exir import memory_planning

    import devpass.executorch

    @functools.wraps(memory_planning.greedy)  # __name__ "greedy", the signature's docs
    def greedy(*args, **kwargs):
        _state["calls"] += 1
        return devpass.executorch.plan_memory(*args, **kwargs)

    _state["original"] = memory_planning.greedy
    memory_planning.greedy = greedy


def pytest_sessionfinish(session, exitstatus):
    from executorch.exir import memory_planning

    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"devpass_planner_in_place: devpass's planner ran {_state['calls']} times in greedy's place")
    if _state["original"] is not None:
        memory_planning.greedy = _state["original"]
    if _state["calls"] == 0 and exitstatus == 0:
        session.exitstatus = 1
