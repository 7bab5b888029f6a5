"""A deployment of the course on this machine for tests and benchmarks (root only).

``deploy()`` runs hub/deploy.py install into ``<repo>/_build/hub-test`` (the students' venv and
the proxy are kept between runs; course, exchange and service state are made afresh) with
accounts of their own (``agt-`` names, homes under /tmp/agt-homes), so nothing of a real
deployment on the same machine is touched. The helpers act as those accounts do: students run
nbgrader from the students' venv in their homes, the instructor from the repository's venv in
the course root, the service as its own user.
"""

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PREFIX = REPO / "_build" / "hub-test"
HOMES = Path("/tmp/agt-homes")
INSTRUCTOR, GRADER = "agt-teacher", "agt-grader"
STUDENTS_GROUP, STAFF_GROUP = "agt-students", "agt-staff"
PASSWORD = "agt-pass-7"  # every test account's (local accounts on a test machine)
FRESH = ("course", "exchange", "grader", "hub", "secret", "hub.json", "passwords.csv")


def students(n):
    return [f"agt-s{i:02d}" for i in range(1, n + 1)]


def deploy(n_students=4, extra_args=(), config=""):
    """Deploy for ``n_students`` students -> the settings (hub.json as a dict); ``config`` is
    appended to the course's nbgrader_config.py."""
    for name in FRESH:
        p = PREFIX / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    PREFIX.mkdir(parents=True, exist_ok=True)
    csv = PREFIX / "students.csv"
    csv.write_text("id,password\n" + "".join(f"{s},{PASSWORD}\n" for s in students(n_students)))
    cmd = [
        sys.executable,
        str(REPO / "hub" / "deploy.py"),
        "install",
        "--prefix",
        str(PREFIX),
        "--no-protect-repo",
        "--instructor",
        INSTRUCTOR,
        "--instructor-password",
        PASSWORD,
        "--grader-user",
        GRADER,
        "--students-group",
        STUDENTS_GROUP,
        "--staff-group",
        STAFF_GROUP,
        "--students",
        str(csv),
        "--home-base",
        str(HOMES),
        "--repo-venv",
        str(Path(sys.executable).parents[1]),
        *extra_args,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if r.returncode:
        raise RuntimeError(f"hub/deploy.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    settings = json.loads((PREFIX / "hub.json").read_text())
    for s in students(n_students):  # a fresh home: no nbgrader cache of an earlier run
        home = Path(pwd.getpwnam(s).pw_dir)
        for child in home.iterdir():
            if child.name not in (".bashrc", ".profile", ".bash_logout"):
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    if config:
        with open(Path(settings["course"]) / "nbgrader_config.py", "a") as f:
            f.write(config)
    return settings


def as_user(user, cmd, cwd=None, env=None, timeout=300, check=True, **kw):
    """Run ``cmd`` as ``user`` (runuser), with that user's HOME and a clean environment."""
    info = pwd.getpwnam(user)
    base = {
        "HOME": info.pw_dir,
        "USER": user,
        "LANG": "C.UTF-8",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "MPLBACKEND": "Agg",
    }
    base.update(env or {})
    full = ["runuser", "-u", user, "--", "env", "-i", *[f"{k}={v}" for k, v in base.items()]]
    r = subprocess.run(
        [*full, *map(str, cmd)],
        cwd=cwd or info.pw_dir,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )
    if check and r.returncode:
        raise RuntimeError(f"{cmd} as {user} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def student_nbgrader(settings, student, *args, check=True):
    nbgrader = Path(settings["student_venv"]) / "bin" / "nbgrader"
    return as_user(student, [nbgrader, *args], check=check)


def instructor_cmd(settings, *cmd, check=True, timeout=600):
    env = {"AUTOGRADER_SECRET_FILE": settings["secret"]}
    return as_user(INSTRUCTOR, cmd, cwd=settings["course"], env=env, check=check, timeout=timeout)


def instructor_nbgrader(settings, *args, check=True):
    return instructor_cmd(
        settings, Path(settings["repo_venv"]) / "bin" / "nbgrader", *args, check=check
    )


def open_for_feedback(settings, assignments, attempts=10, show="full"):
    """The instructor opens ``assignments`` for instant feedback (appends to the course's
    nbgrader_config.py, as the guide says to edit it)."""
    with open(Path(settings["course"]) / "nbgrader_config.py", "a") as f:
        f.write(
            f"c.InstantFeedback.assignments = {list(assignments)!r}\n"
            f"c.InstantFeedback.attempts_per_day = {attempts}\n"
            f"c.InstantFeedback.show = {show!r}\n"
        )


def release(settings, assignment):
    instructor_nbgrader(settings, "generate_assignment", assignment, "--force")
    instructor_nbgrader(settings, "release_assignment", assignment, "--force")


def start_service(settings, jobs=2, log=None):
    """The grading service as its user, outside the hub (hub/jupyterhub_config.py starts the
    same command) -> Popen."""
    py = Path(settings["repo_venv"]) / "bin" / "python"
    cmd = [py, "-m", "autograder.service", "serve", "--course", settings["course"]]
    cmd += ["--state", settings["grader_state"], "--students-group", settings["students_group"]]
    cmd += [*(["--jobs", str(jobs)] if jobs else []), "--poll", "0.2"]
    info = pwd.getpwnam(settings["grader_user"])
    env = [
        f"HOME={info.pw_dir}",
        f"AUTOGRADER_SECRET_FILE={settings['secret']}",
        "PATH=/usr/bin:/bin",
        "LANG=C.UTF-8",
    ]
    out = open(log, "ab") if log else subprocess.DEVNULL
    return subprocess.Popen(
        ["runuser", "-u", settings["grader_user"], "--", "env", "-i", *env, *map(str, cmd)],
        cwd=settings["grader_state"],
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(proc, sig=signal.SIGTERM, timeout=30):
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def service_ready(settings, timeout=180):
    """Wait until the service's judges are up (its log says so)."""
    log = Path(settings["grader_state"]) / "service.log"
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if log.exists() and "grading service ready" in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise TimeoutError(f"the grading service did not start: {tail(log)}")


def tail(path, n=3000):
    try:
        return Path(path).read_text(errors="replace")[-n:]
    except OSError:
        return ""


def fetch_assignment(settings, student, assignment):
    student_nbgrader(settings, student, "fetch_assignment", assignment)
    return Path(pwd.getpwnam(student).pw_dir) / assignment / f"{assignment}.ipynb"


def write_notebook(student, path, nb, name=None):
    """Write ``nb`` (JSON) as the student's file (owned by them)."""
    path = Path(path)
    if name:
        path.unlink()
        path = path.with_name(name)
    path.write_text(json.dumps(nb))
    info = pwd.getpwnam(student)
    os.chown(path, info.pw_uid, info.pw_gid)
    return path


def feedback_pages(settings, student, assignment):
    """Run the student's fetch_feedback -> {file name: html} of every page fetched so far."""
    student_nbgrader(settings, student, "fetch_feedback", assignment)
    home = Path(pwd.getpwnam(student).pw_dir)
    folder = home / assignment / "feedback"
    return {
        f"{p.parent.name}/{p.name}": p.read_text(encoding="utf-8")
        for p in sorted(folder.glob("*/*.html"))
    }


def wait_feedback(settings, student, assignment, count=1, timeout=120):
    """Wait until the feedback of the student's ``count`` latest submissions is in the exchange,
    then fetch it as the student -> (pages, seconds waited)."""
    t0 = time.monotonic()
    for _, secret, stems in cached_submissions(student, assignment)[-count:]:
        for stem in stems:
            wait_released(settings, secret, stem, timeout=timeout)
    pages = feedback_pages(settings, student, assignment)
    if len(pages) < count:
        raise TimeoutError(f"{student}: {len(pages)} of {count} feedback pages fetched")
    return pages, time.monotonic() - t0


def submit(settings, student, assignment):
    """The student's ``nbgrader submit`` -> the submission's (timestamp, secret, stems) from
    the student's own cache (what fetch_feedback will look for)."""
    t0 = time.time()
    student_nbgrader(settings, student, "submit", assignment)
    subs = cached_submissions(student, assignment)
    newest = max(subs, key=lambda s: s[0])
    return newest + (t0,)


def cached_submissions(student, assignment, course_id="attention-transformers"):
    home = Path(pwd.getpwnam(student).pw_dir)
    cache = home / ".local/share/jupyter/nbgrader_cache" / course_id
    out = []
    for d in sorted(cache.glob(f"{student}+{assignment}+*")):
        secret = (d / "submission_secret.txt").read_text()
        stems = sorted(p.stem for p in d.glob("*.ipynb"))
        out.append((d.name.split("+")[2], secret, stems))
    return out


def released(settings, secret, stem):
    """The exchange's feedback file of a submitted notebook ``stem`` (it may not exist yet)."""
    from nbgrader.utils import notebook_hash

    name = notebook_hash(secret=secret, notebook_id=stem)
    exchange = Path(settings["exchange"]) / "attention-transformers" / "feedback"
    return exchange / f"{name}.html"


def wait_released(settings, secret, stem, timeout=120, poll=0.05):
    """Wait until the feedback of ``stem`` is in the exchange -> when it appeared (time.time)."""
    path = released(settings, secret, stem)
    t0 = time.monotonic()
    while not path.exists():
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"no feedback for {stem} after {timeout} s")
        time.sleep(poll)
    return time.time()
