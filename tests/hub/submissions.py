"""Student notebooks for the hub's tests and benchmark: the softmax release notebook filled with
the reference solutions, with one catalogued mistake, or hostile code."""

import json
from pathlib import Path

from bench.grading import solution_sources

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "exercises" / "source" / "softmax" / "softmax.ipynb"
# tests/mistakes/softmax.py "naive_exp": exp without subtracting the maximum
NAIVE = """def softmax(x, dim=-1, temperature=1.0):
    e = torch.exp(x / temperature)
    return e / e.sum(dim=dim, keepdim=True)
"""
NAIVE_SAYS = "최댓값을 빼지 않고 exp"
LOOP = "while True:\n    pass\n"
FORK_BOMB = "import os\nwhile True:\n    os.fork()\n"
HUGE_OUTPUT = "while True:\n    print('x' * 100000)\n"


def solutions():
    return solution_sources(json.loads(SOURCE.read_text()))


def filled(release_nb, **cells):
    """``release_nb`` (JSON) with every solution cell solved, then ``cells`` {grade_id: code}."""
    code = dict(solutions(), **cells)
    nb = json.loads(json.dumps(release_nb))
    for c in nb["cells"]:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in code:
            c["source"] = code[gid]
    return nb


def hostile(release_nb):
    """Every solution cell hostile: an endless loop, a fork bomb, endless output."""
    ids = list(solutions())
    kinds = [LOOP, FORK_BOMB, HUGE_OUTPUT]
    return filled(release_nb, **{gid: kinds[i % 3] for i, gid in enumerate(ids)})
