"""The student's environment: a fresh virtual environment with only requirements-student.txt
(what book/intro.md tells students to install) runs the assignments.

In a new venv (temporary folder; .venv is never touched), with that venv's Python and kernel:
every release notebook (made by tools/release.py, the code `make release` uses) runs with its
public test cells failing only with NotImplementedError; every source notebook (solution cells +
visible tests, hidden-test regions stripped) runs without an error; and `nbgrader validate`
accepts a source notebook and reports the unsolved release notebook.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUDENT_REQUIREMENTS = ROOT / "requirements-student.txt"
sys.path.insert(0, str(ROOT / "tools"))
try:
    import release
finally:
    sys.path.remove(str(ROOT / "tools"))

ASSIGNMENTS = release.assignments(ROOT)
HIDDEN_RE = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S | re.M
)


def pins(path):
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            out[name.strip().lower()] = version.strip()
    return out


def test_student_requirements_are_exact_pins_of_the_course():
    student, course = pins(STUDENT_REQUIREMENTS), pins(ROOT / "requirements.txt")
    assert set(student) == {"torch", "numpy", "matplotlib", "nbgrader", "jupyterlab", "ipykernel"}
    assert all(student.values()), student  # every line is name==version
    for name in ("torch", "numpy", "matplotlib", "nbgrader"):
        assert student[name] == course[name], name
    # older than the course's: the newest ipykernel that does not warn at every kernel start
    assert (
        student["ipykernel"] == "7.2.0" and "running over TCP" in STUDENT_REQUIREMENTS.read_text()
    )


def _bin(venv, name):
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


# `student_env` (a fresh venv with requirements-student.txt, once per session) is in conftest.py.


RUNNER = r"""
import json, pathlib, sys
import nbformat
from nbclient import NotebookClient

results = {}
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    folder = str(pathlib.Path(path).parent)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": folder}})
    client.execute()
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        errors = [o for o in cell.outputs if o.output_type == "error"]
        cells.append({
            "id": meta.get("grade_id"),
            "test": bool(meta.get("grade")) and not meta.get("solution"),
            "error": errors[0]["ename"] if errors else None,
            "evalue": errors[0]["evalue"][:300] if errors else None,
        })
    results[pathlib.Path(path).stem] = cells
print(json.dumps(results))
"""


def run_notebooks(student_env, paths):
    """Start running ``paths`` with the student's Python (one kernel per notebook)."""
    python, env, work = student_env
    (work / "runner.py").write_text(RUNNER, encoding="utf-8")
    cmd = [str(python), str(work / "runner.py"), *map(str, paths)]
    return subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def results(proc, timeout=900):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err.decode()[-3000:]
    return json.loads(out.decode().strip().splitlines()[-1])


@pytest.mark.slow
def test_notebooks_run_in_the_student_environment(student_env, tmp_path):
    """Release notebooks: only NotImplementedError, in at least one public test cell each.
    Source notebooks (hidden-test regions stripped): no error at all. Both sets run at once."""
    rel = shutil.copytree(release.release_notebooks(ROOT), tmp_path / "release")  # make notebooks
    src = tmp_path / "source"
    for name in ASSIGNMENTS:
        nb = json.loads((ROOT / "exercises" / "source" / name / f"{name}.ipynb").read_text())
        for cell in nb["cells"]:
            cell["source"] = HIDDEN_RE.sub("", "".join(cell["source"]))
        (src / name).mkdir(parents=True)
        (src / name / f"{name}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    released = run_notebooks(student_env, [rel / a / f"{a}.ipynb" for a in ASSIGNMENTS])
    solved = run_notebooks(student_env, [src / a / f"{a}.ipynb" for a in ASSIGNMENTS])
    released, solved = results(released), results(solved)

    assert sorted(released) == sorted(solved) == ASSIGNMENTS
    for name in ASSIGNMENTS:
        errors = [c for c in released[name] if c["error"]]
        wrong = [c for c in errors if c["error"] != "NotImplementedError"]
        assert not wrong, (name, wrong)
        assert any(c["test"] for c in errors), (name, "no public test cell fails")
        assert any(c["test"] for c in solved[name]), name
        failed = [c for c in solved[name] if c["error"]]
        assert not failed, (name, failed)


# what a student must not see when a notebook starts: the kernel's transport warning (ipykernel
# 7.3+ under jupyter_client's default of no CurveZMQ keys) and nbgrader's missing-config warning
ALARMS = ("running over TCP", "without encryption", "No nbgrader_config.py")


@pytest.mark.slow
def test_students_start_without_alarms(student_env, tmp_path):
    """A release notebook with the bundle's nbgrader_config.py beside it (tools/release.py
    write_student_config), run as a student runs it: `jupyter nbconvert --execute` (nbclient,
    the same kernel start as JupyterLab's) and `nbgrader validate`. Neither warns."""
    python, env, _ = student_env
    bindir = python.parent
    name = "softmax"
    folder = shutil.copytree(release.release_notebooks(ROOT) / name, tmp_path / name)
    config = release.write_student_config(folder)
    assert "course_id" in config.read_text() and config.name == "nbgrader_config.py"
    runs = {
        "nbconvert": [str(bindir / "jupyter"), "nbconvert", "--to", "notebook", "--execute"]
        + ["--ExecutePreprocessor.allow_errors=True", "--output", "run.ipynb", f"{name}.ipynb"],
        "validate": [str(bindir / "nbgrader"), "validate", f"{name}.ipynb"],
    }
    for what, cmd in runs.items():
        r = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        out = r.stdout + r.stderr
        assert "NotImplementedError" in out or what == "nbconvert", (what, out[-3000:])
        assert not [a for a in ALARMS if a in out], (what, out[-3000:])
    assert (folder / "run.ipynb").is_file()


@pytest.mark.slow
def test_nbgrader_validate_in_the_student_environment(student_env, tmp_path):
    python, env, _ = student_env
    nbgrader = _bin(python.parent.parent, "nbgrader")
    name = "softmax"
    (tmp_path / "solved").mkdir()
    (tmp_path / "solved" / f"{name}.ipynb").write_bytes(
        (ROOT / "exercises" / "source" / name / f"{name}.ipynb").read_bytes()
    )
    shutil.copytree(release.release_notebooks(ROOT) / name, tmp_path / "release" / name)

    def validate(folder):
        cmd = [str(nbgrader), "validate", f"{name}.ipynb"]
        r = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        return r.returncode, r.stdout + r.stderr

    rc, out = validate(tmp_path / "solved")
    assert rc == 0 and "Success! Your notebook passes all the tests." in out, out[-3000:]
    rc, out = validate(tmp_path / "release" / name)
    assert "Success!" not in out and "NotImplementedError" in out, out[-3000:]
