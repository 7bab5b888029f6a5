"""hub/studentvenv.py: a venv built from requirements (resolved by pip, or at the versions of a
lock made from them), the repository venv's identical distributions linked (not unpacked
again), console scripts running the new venv's interpreter, a version the repository's venv
lacks installed by pip; the students' lock up to date with the requirement files."""

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

from hub import studentvenv

DONOR = Path(sys.prefix)


def test_identical_distributions_are_linked_the_rest_installed(tmp_path):
    pygments = importlib.metadata.version("pygments")
    six = importlib.metadata.version("six")
    other_six = "1.16.0" if six != "1.16.0" else "1.15.0"
    req = tmp_path / "requirements.txt"
    req.write_text(f"pygments=={pygments}\nsix=={other_six}\n")
    lock = tmp_path / "requirements.lock"
    done = studentvenv.build(tmp_path / "resolved", req, donor=DONOR, lock=lock, log=print)
    assert done == {"linked": ["pygments"], "installed": ["six"], "locked": False}
    wanted = {"pygments": (pygments, True), "six": (other_six, True)}
    studentvenv.write_lock(lock, req, sys.executable, wanted)
    venv = tmp_path / "venv"
    done = studentvenv.build(venv, req, donor=DONOR, lock=lock, log=print)
    assert done == {"linked": ["pygments"], "installed": ["six"], "locked": True}

    site = studentvenv.site_packages(venv / "bin" / "python")
    donor_site = studentvenv.site_packages(DONOR / "bin" / "python")
    ours, theirs = site / "pygments" / "lexer.py", donor_site / "pygments" / "lexer.py"
    assert ours.stat().st_ino == theirs.stat().st_ino  # a hard link, nothing unpacked
    script = (venv / "bin" / "pygmentize").read_text()
    assert str(DONOR.resolve()) not in script and str(venv.resolve()) in script.splitlines()[0]
    mark = site / f"pygments-{pygments}.dist-info" / "REQUESTED"  # a top-level requirement
    donor_mark = donor_site / mark.relative_to(site)
    assert mark.exists() and not (donor_mark.exists() and mark.samefile(donor_mark))

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = [venv / "bin" / "pygmentize", "-V"]
    out = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout
    assert pygments in out
    probe = "import pygments, six, sys; print(pygments.__file__, six.__version__, sys.prefix)"
    out = subprocess.run(
        [venv / "bin" / "python", "-c", probe], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    assert Path(out[0]).is_relative_to(venv) and out[1] == other_six
    assert Path(out[2]).resolve() == venv.resolve()


def test_the_students_lock_is_made_from_the_requirements_as_they_are():
    """hub/requirements-students.lock was written from the requirement files as they are now
    (else every deployment resolves again: `python3 hub/studentvenv.py lock`), and pins every
    top-level requirement at its pinned version."""
    wanted = studentvenv.read_lock(studentvenv.LOCK, studentvenv.REQUIREMENTS, sys.executable)
    assert wanted is not None, "run `python3 hub/studentvenv.py lock`"
    pins = {}
    for f in studentvenv.requirement_files(studentvenv.REQUIREMENTS):
        for line in f.read_text().splitlines():
            if "==" in line and not line.startswith(("#", "-")):
                name, version = line.split("#")[0].strip().split("==")
                pins[studentvenv.canonical(name)] = version
    assert len(pins) >= 6
    for name, version in pins.items():
        assert wanted[name][0].split("+")[0] == version and wanted[name][1], name
