"""docs/executorch.md's worked example runs as shown, and prints what its comments say."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "executorch.md")


def _python_blocks():
    text = open(DOC).read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_worked_example_runs_and_prints_its_comments(tmp_path, monkeypatch):
    blocks = [b for b in _python_blocks() if b.startswith("import torch")]
    assert len(blocks) == 1
    block = blocks[0]
    monkeypatch.chdir(tmp_path)  # it writes mobilenet_v2.pte
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, DOC, "exec"), {"__name__": "__doc_example__"})
    assert (tmp_path / "mobilenet_v2.pte").stat().st_size > 0
    # Each print(...) line's trailing comment, when it is a Python literal, is what it prints.
    expected = []
    for line in block.splitlines():
        if line.startswith("print(") and "#" in line:
            comment = line.split("#", 1)[1].strip()
            try:
                expected.append(ast.literal_eval(comment))
            except (ValueError, SyntaxError):
                expected.append(None)  # a description, not a value
    lines = printed.getvalue().splitlines()
    assert len(lines) == len(expected)
    for shown, want in zip(lines, expected):
        if want is not None:
            assert ast.literal_eval(shown) == want
