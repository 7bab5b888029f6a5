"""The fixture course tests/fixtures/grader_course (assignment `demo`: softmax 2 points, Scale 3
points) set up as an instructor's course, and submissions put into it: shared by the instructor
path's tests (tests/instructor/test_instructor_submissions.py, test_instructor_guide.py).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "grader_course"
BIN = Path(sys.executable).parent
SOFTMAX = "def softmax(x, dim=-1):\n    return torch.softmax(x, dim=dim)\n"
SCALE = (
    "class Scale(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
    "        self.weight = nn.Parameter(torch.ones(d))\n"
    "    def forward(self, x):\n        return x * self.weight\n"
)
GOOD = {"softmax_sol": SOFTMAX, "scale_sol": SCALE}
MATH = (
    "Scale: $y_i = w_i x_i$, and\n\n$$\\mathrm{softmax}(x)_i = \\frac{e^{x_i}}{\\sum_j e^{x_j}}$$"
)


def env():
    """The environment of the course's commands: this one without PYTHONPATH."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run(cmd, cwd, ok=True, timeout=300, **kw):
    """Run ``cmd`` in ``cwd``; it must succeed (``ok``) or fail (not ``ok``)."""
    r = subprocess.run(
        cmd, cwd=cwd, env=kw.pop("env", env()), capture_output=True, text=True, timeout=timeout
    )
    assert (r.returncode == 0) == ok, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def make_course(root, config="", before=()):
    """The fixture course at ``root`` with ``config`` appended to its nbgrader_config.py, the
    nbgrader commands ``before`` run, then `demo` generated -> its release notebook (JSON)."""
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__", ".canary-*"))
    source = root / "source/demo/demo.ipynb"
    nb = json.loads(source.read_text())
    nb["cells"].append(nbformat.v4.new_markdown_cell(MATH))  # for the feedback page's math
    source.write_text(json.dumps(nb))
    with open(root / "nbgrader_config.py", "a") as f:
        f.write(f"c.SandboxLimits.wall_s = 4.0\n{config}")
    for args in before:
        run([str(BIN / "nbgrader"), *args], root)
    run([str(BIN / "nbgrader"), "generate_assignment", "demo", "--force"], root)
    return json.loads((root / "release/demo/demo.ipynb").read_text())


def filled(release, codes):
    """Copy of the notebook ``release`` (JSON) whose cells {grade_id: source} hold ``codes``."""
    nb = json.loads(json.dumps(release))
    for c in nb["cells"]:
        gid = c["metadata"].get("nbgrader", {}).get("grade_id")
        if gid in codes:
            c["source"] = codes[gid]
    return nb


def put(root, student, name, data):
    """Write ``data`` (a notebook, text or bytes) as submitted/<student>/demo/<name>."""
    folder = root / "submitted" / student / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps(data) if isinstance(data, dict) else data
    (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
