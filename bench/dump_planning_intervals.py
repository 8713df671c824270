"""Writes the intervals ExecuTorch's apply_algo hands devpass's placement (the arrays
devpass.executorch.plan_memory passes to _devpass.place_intervals) for the models of
python/tests/planning_cases.py, CPU-only and at full input sizes, to tests/data/planning/<model>.intervals,
so that the C++ placement can be measured and tested without torch (tests/test_planning_intervals.cpp).

File format (text, one record a line, `#` starts a comment):
  alignment <bytes>
  arenas <count>
  greedy <arena> <bytes>          ExecuTorch greedy's bytes for that arena's specs, less extra_padding
  <first> <last> <size> <arena>   one value: its closed lifetime in steps, bytes (unaligned), arena
A model whose method makes more than one planning call (submodules) gets one file per call,
<model>.<k>.intervals; the models here make one.

Usage: build/python-venv/bin/python -W ignore bench/dump_planning_intervals.py [model ...]
"""

from __future__ import annotations

import os
import sys
import warnings

warnings.filterwarnings("ignore")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python", "tests"))

from planning_cases import MODELS, compare, edge_program  # noqa: E402

import devpass._memory_planning as dmp  # noqa: E402


def main(argv) -> int:
    names = [a for a in argv[1:] if a in MODELS] or list(MODELS)
    out_dir = os.path.join(here, "..", "tests", "data", "planning")
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        calls = []
        real = dmp._devpass.place_intervals

        def recording(**kw):
            calls.append(kw)
            return real(**kw)

        dmp._devpass.place_intervals = recording
        try:
            edge, _ = edge_program(name, None, small=False)
            _, records = compare(edge)
        finally:
            dmp._devpass.place_intervals = real
        assert len(calls) == len(records), (name, len(calls), len(records))
        for k, (kw, record) in enumerate(zip(calls, records)):
            path = os.path.join(out_dir, f"{name}.intervals" if len(calls) == 1 else f"{name}.{k}.intervals")
            lines = [
                f"# {name}, CPU-only, full input sizes: the intervals ExecuTorch 1.5.1's apply_algo hands",
                "# devpass's placement (written by bench/dump_planning_intervals.py)",
                "# first last size arena",
                f"alignment {kw['alignment']}",
                f"arenas {kw['arena_count']}",
            ]
            if kw["arena_count"] == 1:  # greedy's bufsizes sum the arenas; one arena: that sum
                lines.append(f"greedy 0 {record['greedy']}")
            for f, l, s, a in zip(kw["first"].tolist(), kw["last"].tolist(), kw["size"].tolist(), kw["arena"].tolist()):
                lines.append(f"{f} {l} {s} {a}")
            with open(path, "w") as out:
                out.write("\n".join(lines) + "\n")
            print(f"{path}: {len(kw['first'])} values, greedy {record['greedy']} B, devpass {record['devpass']} B, bound {record['lower_bound']} B")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
