"""A pytest plugin: runs a test session with devpass installed in place of ExecuTorch's
PropagateDevicePass (policy from $DEVPASS_POLICY, default executorch), and fails the session if
ExecuTorch never constructed devpass's pass (so a passing run cannot mean "nothing ran").

    python -m pytest -p devpass_in_place <executorch>/exir/tests/test_propagate_device_pass.py
"""

import os

import pytest

_calls = []


def pytest_configure(config):
    import devpass.executorch

    _calls.append(devpass.executorch.install(os.environ.get("DEVPASS_POLICY", "executorch")))


def pytest_sessionfinish(session, exitstatus):
    import devpass.executorch

    calls = _calls[0] if _calls else []
    ran = sum(1 for p in calls if p.last_timings)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"devpass_in_place: devpass's pass constructed {len(calls)} times, ran {ran} times "
                            f"(policy {os.environ.get('DEVPASS_POLICY', 'executorch')})")
    devpass.executorch.uninstall()
    if ran == 0 and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
