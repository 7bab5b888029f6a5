"""The appeal path reproduces the student's feedback byte for byte.

A few notebooks of the decoding catalogue (tests/mistakes/decoding.py: a mistake shown by a
counterexample drawn from the run seed, beam scores computed in float32, and the correct
notebook) are graded as a course would grade them (`python -m autograder grade`, then
`nbgrader generate_feedback`), then appealed with `pytest autograder/checks/decoding.py --notebook
<submitted notebook>` under the same grader secret, as the instructor guide says. Every test
cell's verdict and message must be what the autograded notebook holds and what the feedback page
shows: the same inputs, the same counterexample numbers, the public tests run as in the batch.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import notebook as nbio
from tests.support.catalogue import SUITES, source_notebook, with_cell

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ASSIGNMENT = "decoding"
# a counterexample from seeded sampling, and beam scores in float32 (a scalar printed with all its
# digits; until 2026-11-28 only the notebook's public test caught it, now the float64 check does)
APPEALED = ("generate_temperature_after_filters", "beam_log_probs_in_float32")


def run(cmd, cwd, env, ok=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert (r.returncode == 0) == ok, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course root with the decoding assignment, graded and its feedback generated, under a
    grader secret of its own -> (root, env, {student: submitted path})."""
    root = tmp_path_factory.mktemp("appeal") / "course"
    (root / "source").mkdir(parents=True)
    shutil.copy(REPO / "exercises" / "nbgrader_config.py", root)
    shutil.copytree(REPO / "exercises" / "source" / ASSIGNMENT, root / "source" / ASSIGNMENT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["AUTOGRADER_SECRET_FILE"] = str(root.parent / "secret")
    run([str(BIN / "nbgrader"), "generate_assignment", ASSIGNMENT, "--force"], root, env)
    mistakes = {m["name"]: m for m in SUITES[ASSIGNMENT].MISTAKES}
    src = source_notebook(ASSIGNMENT)
    notebooks = {n: with_cell(src, mistakes[n]["cell"], mistakes[n]["source"]) for n in APPEALED}
    notebooks["correct"] = src
    paths = {}
    for student, nb in notebooks.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        paths[student] = folder / f"{ASSIGNMENT}.ipynb"
        nbformat.write(nb, paths[student])
    grade = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--jobs", "2", "--quiet"]
    run(grade, root, env)
    run([str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT, "--force"], root, env)
    return root, env, paths


def autograded_messages(root, student):
    """{grade_id: (outcome, message)} as the autograded notebook holds them."""
    path = root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    out = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if nbio.is_test(cell):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            out[nbio.grade_id(cell)] = errors[0].evalue if errors else ""
    return out


def page_text(root, student):
    page = root / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


@pytest.mark.parametrize("student", [*APPEALED, "correct"])
def test_appeal_reproduces_the_feedback_byte_for_byte(course, student, tmp_path):
    root, env, paths = course
    out = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pytest", str(REPO / "autograder" / "checks" / f"{ASSIGNMENT}.py")]
    cmd += ["--notebook", str(paths[student]), "--course", str(root), "--report-json", str(out)]
    cmd += ["-p", "no:cacheprovider", "-q"]
    r = run(cmd, REPO, env, ok=student == "correct")
    report = json.loads(out.read_text())
    appealed = {gid: message for gid, _, message, _ in report["verdicts"]}
    assert appealed == autograded_messages(root, student)
    failed = [(gid, o, m) for gid, o, m, _ in report["verdicts"] if o != "passed"]
    assert bool(failed) == (student != "correct")
    text = page_text(root, student)
    for gid, outcome, message in failed:
        assert f"{gid}: {outcome.upper()}" in r.stdout
        for line in message.splitlines():
            assert line.strip() in text, (gid, line)  # the student's page shows it all
    if student == "beam_log_probs_in_float32":  # two scores that differ print differently
        assert any("로그 확률을 float64 보다 낮은 정밀도" in m for _, _, m in failed)
    if student == "generate_temperature_after_filters":  # numbers drawn from the run seed
        assert any(re.search(r"\d\.\d", m) for _, _, m in failed)
