"""ExecuTorch's greedy memory planner vs devpass's (devpass.executorch.plan_memory) on the same
specs, in one run: the test set of python/tests/planning_cases.py (full input sizes), CPU-only
and under the DevicePartitioner partitionings. Each to_executorch() runs both algorithms in each
device bucket (apply_algo's per-device calls) and keeps devpass's plan, which ExecuTorch's
verifier checks.

Prints JSON lines {"bench","metric","value","unit"} per model, partitioning and device arena:
  <model>_<partitioning>_<device>_{devpass,greedy,lower_bound}_bytes
  <model>_<partitioning>_{devpass,greedy}_seconds      planning, summed over the buckets
With --table, docs/executorch.md's table instead. Arguments: model and partitioning names to run
(default all); partitionings are cpu, whole, per_op, two_gpu.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

from planning_cases import MODELS, compare, edge_program, per_device  # noqa: E402

SCHEMES = {"cpu": None, "whole": "whole", "per_op": "per_op", "two_gpu": "two_gpu"}


def emit(metric: str, value: float, unit: str) -> None:
    print(json.dumps({"bench": "executorch_planning", "metric": metric, "value": round(value, 6), "unit": unit}), flush=True)


def main(argv) -> int:
    table = "--table" in argv
    names = [a for a in argv[1:] if a in MODELS] or list(MODELS)
    schemes = [a for a in argv[1:] if a in SCHEMES] or list(SCHEMES)
    if table:
        print("| model | partitioning | arena | devpass (B) | greedy (B) | lower bound (B) | devpass ÷ bound | greedy ÷ bound | devpass ÷ greedy | planning s, devpass / greedy |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        for scheme in schemes:
            started = time.perf_counter()
            try:
                edge, _ = edge_program(name, SCHEMES[scheme], small=False)
                _, records = compare(edge)
            except Exception as error:  # a partitioning the recording backend cannot lower
                print(f"{name} {scheme}: not lowered ({type(error).__name__}: {str(error).splitlines()[0][:120]})", file=sys.stderr)
                continue
            ours = sum(r["devpass_seconds"] for r in records)
            theirs = sum(r["greedy_seconds"] for r in records)
            for device, (d, g, lb) in per_device(records).items():
                stem = f"{name}_{scheme}_{device.replace(':', '')}"
                if table:
                    ratio = lambda a, b: f"{a / b:.3f}" if b else "-"  # noqa: E731
                    print(f"| {name} | {scheme} | {device} | {d:,} | {g:,} | {lb:,} | {ratio(d, lb)} | {ratio(g, lb)} | {ratio(d, g)} | {ours:.4f} / {theirs:.4f} |", flush=True)
                else:
                    emit(f"{stem}_devpass_bytes", d, "B")
                    emit(f"{stem}_greedy_bytes", g, "B")
                    emit(f"{stem}_lower_bound_bytes", lb, "B")
            if not table:
                emit(f"{name}_{scheme}_devpass_seconds", ours, "s")
                emit(f"{name}_{scheme}_greedy_seconds", theirs, "s")
            print(f"{name} {scheme}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
