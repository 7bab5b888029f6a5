"""Every assignment: notebook structure, its hidden-check module, the instructor's pytest commands,
and the whole nbgrader cycle (generate, batch command, stock autograde).

The checks themselves are proved against the reference by ``pytest autograder/checks
--reference`` (tests/grader/test_reference.py) and against wrong solutions by
tests/grader/test_mistakes.py.
"""

import ast
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

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "exercises" / "source"
CHECKS = REPO / "autograder" / "checks"
BIN = Path(sys.executable).parent
ASSIGNMENTS = sorted(p.name for p in SOURCE.iterdir() if (p / f"{p.name}.ipynb").exists())


def source(assignment):
    return nbio.read_trusted(SOURCE / assignment / f"{assignment}.ipynb")


def check_functions(assignment):
    """Names of the test functions of autograder/checks/<assignment>.py."""
    tree = ast.parse((CHECKS / f"{assignment}.py").read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name[:5] == "test_"}


def test_all_nine_assignments_exist():
    expected = "attention decoding efficient masking models multihead normalization positional"
    assert ASSIGNMENTS == sorted(expected.split() + ["softmax"])


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_test_cells_are_check_functions(assignment):
    """A test cell's grade_id is exactly a test function of the check module, and back."""
    cells = nbio.test_cells(source(assignment))
    assert {gid for gid, _ in cells} == check_functions(assignment)
    assert len(cells) >= 3 and sum(p for _, p in cells) == 10 and all(p > 0 for _, p in cells)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_check_markers_decorate_test_functions(assignment):
    """``@pytest.mark.forbid``, ``spec`` and ``given`` act only on a test function: on a
    helper, pytest ignores them and the rule silently stops applying."""
    tree = ast.parse((CHECKS / f"{assignment}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            marks = [ast.unparse(d) for d in node.decorator_list]
            ruled = [m for m in marks if re.match(r"pytest\.mark\.(forbid|spec|given)\b", m)]
            assert not ruled or node.name.startswith("test_"), (node.name, ruled)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_gives_no_answers_or_repository_imports(assignment):
    for cell in source(assignment).cells:
        src = cell.source
        for region in re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", src, re.S):
            lines = [ln.strip() for ln in region.splitlines() if ln.strip()]
            assert lines and all(ln.startswith("#") for ln in lines)
        if cell.cell_type == "code":
            for banned in ("solutions", "autograder", "bookplot", "booktime"):
                assert not re.search(rf"^\s*(import|from)\s+{banned}\b", src, re.M), banned
    release = json.dumps(nbio.release_from_source(source(assignment)))
    assert "BEGIN SOLUTION" not in release and "BEGIN HIDDEN" not in release


def pytest_notebook(assignment, notebook, *options):
    cmd = [sys.executable, "-m", "pytest", str(CHECKS / f"{assignment}.py"), "-q"]
    cmd += ["-p", "no:cacheprovider", "--notebook", str(notebook), *options]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    summary = r.stdout.split("grade per test cell:", 1)[-1]
    return dict(re.findall(r"^(test_\w+): (PASSED|FAILED|CRASHED|TIMEOUT)", summary, re.M)), r


@pytest.mark.slow
def test_pytest_notebook_command(tmp_path):
    """`pytest autograder/checks/<a>.py --notebook X`: the source notebook passes every test
    cell, the release notebook fails every one, each with its feedback in the summary."""
    gids = {gid for gid, _ in nbio.test_cells(source("softmax"))}
    verdicts, r = pytest_notebook("softmax", SOURCE / "softmax" / "softmax.ipynb")
    assert verdicts == dict.fromkeys(gids, "PASSED") and r.returncode == 0, r.stdout[-3000:]
    release = tmp_path / "softmax.ipynb"
    release.write_text(json.dumps(nbio.release_from_source(source("softmax"))))
    verdicts, r = pytest_notebook("softmax", release)
    assert verdicts == dict.fromkeys(gids, "FAILED") and r.returncode == 1, r.stdout[-3000:]
    assert "NotImplementedError" in r.stdout and "(`cross_entropy` 셀, " in r.stdout


@pytest.mark.slow
def test_pytest_notebook_uses_the_course_limits(tmp_path):
    """`--notebook` grades under the sandbox limits of the course's nbgrader_config.py (--course):
    with a 1 ms wall clock there even the reference answers time out, with the limit named."""
    course = tmp_path / "course"
    shutil.copytree(SOURCE / "softmax", course / "source" / "softmax")
    config = (REPO / "exercises" / "nbgrader_config.py").read_text(encoding="utf-8")
    config += "c.SandboxLimits.wall_s = 0.001\n"
    (course / "nbgrader_config.py").write_text(config, encoding="utf-8")
    gids = {gid for gid, _ in nbio.test_cells(source("softmax"))}
    notebook = SOURCE / "softmax" / "softmax.ipynb"
    verdicts, r = pytest_notebook("softmax", notebook, "--course", str(course))
    assert verdicts == dict.fromkeys(gids, "TIMEOUT"), r.stdout[-3000:]
    assert "0.001" in r.stdout


def scores(db, assignment):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(assignment)}


@pytest.mark.slow
def test_every_assignment_through_nbgrader(tmp_path):
    """generate_assignment -> batch command over all nine -> stock `nbgrader autograde` (on one):
    the source notebook gets 10 points, the release notebook 0, with both; no release notebook
    holds a line of a solution region."""
    course = tmp_path / "course"
    shutil.copytree(SOURCE, course / "source", ignore=shutil.ignore_patterns(".ipynb_*"))
    shutil.copy(REPO / "exercises" / "nbgrader_config.py", course)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(cmd):
        r = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        return r

    for a in ASSIGNMENTS:
        run([str(BIN / "nbgrader"), "generate_assignment", a, "--force"])
        released = (course / "release" / a / f"{a}.ipynb").read_text()
        text = "".join(c.source + "\n" for c in source(a).cells)
        regions = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", text, re.S)
        outside = re.sub(r"### BEGIN SOLUTION\n.*?### END SOLUTION", "", text, flags=re.S)
        for line in {ln.strip() for region in regions for ln in region.splitlines()}:
            if len(line) > 25 and line not in outside:  # a line only the answer has
                assert json.dumps(line)[1:-1] not in released, (a, line)
        for student, nb in (("ref", SOURCE / a / f"{a}.ipynb"), ("blank", None)):
            folder = course / "submitted" / student / a
            folder.mkdir(parents=True)
            src = nb if nb else course / "release" / a / f"{a}.ipynb"
            shutil.copy(src, folder / f"{a}.ipynb")
    run([sys.executable, "-m", "autograder", "grade", *ASSIGNMENTS, "--jobs", "2", "--quiet"])
    db = course / "gradebook.db"
    for a in ASSIGNMENTS:
        assert scores(db, a) == {"ref": 10.0, "blank": 0.0}, (a, failures(course, "ref", a))
    # the stock command, same configuration, same scores: on the assignment with the most test
    # cells (its path through nbgrader is the same for all nine, and each run starts its own
    # judge: ~9 s per assignment on 2 cores; tests/instructor/test_instructor_submissions.py and the
    # round trip in test_engine.py check the stock command on broken submissions)
    for a in ["decoding"]:
        run([str(BIN / "nbgrader"), "autograde", a, "--force"])
        assert scores(db, a) == {"ref": 10.0, "blank": 0.0}, (a, failures(course, "ref", a))


def failures(course, student, assignment):
    """{grade_id: feedback message} of the failed test cells of an autograded notebook."""
    path = course / "autograded" / student / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: o.get("evalue", "")
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("grade")
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    }
