"""The student's environment: a new venv holding exactly what ``pip install -r
requirements-student.txt`` installs (book/intro.md tells students to), shared by the modules of
this folder, which run notebooks as a student would (tests/conftest.py keeps them on one worker).

The set of distributions and versions is tests/student/requirements-student.lock, pip's own
resolution of requirements-student.txt (``python3 hub/studentvenv.py lock requirements-student.txt
tests/student/requirements-student.lock``); hub/studentvenv.py links each one that this
session's venv holds at the same version instead of unpacking it again, pip installs the rest
(ipykernel 7.2.0) and ``pip check`` verifies the whole. When requirements-student.txt changes
and the lock is not rewritten, pip resolves it afresh (slower, same result).
"""

import os
import sys
from pathlib import Path

import pytest

from hub import studentvenv

ROOT = Path(__file__).resolve().parents[2]
LOCK = Path(__file__).resolve().parent / "requirements-student.lock"


@pytest.fixture(scope="session")
def student_env(tmp_path_factory):
    # not `student`: that is the hidden checks' fixture (autograder.judge.plugin)
    """(python, env, workdir) of a new venv (temporary folder; .venv is never touched) with
    requirements-student.txt installed, created once per session."""
    base = tmp_path_factory.mktemp("student")
    venv = base / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[var] = str(base / var.lower())
    env.pop("JUPYTER_PATH", None)
    env.update(MPLBACKEND="Agg", PYTHONNOUSERSITE="1")
    done = studentvenv.build(
        venv, ROOT / "requirements-student.txt", donor=sys.prefix, lock=LOCK, env=env
    )
    print(f"student venv: {len(done['linked'])} linked, installed {done['installed']}")
    work = base / "work"
    work.mkdir()
    return venv / "bin" / "python", env, work
