"""A deployment of the course on this machine for tests and benchmarks (root only).

Into /var/tmp/agt-hub, outside the repository, which a deployment closes to students (the students'
venv and the proxy are kept between runs; course, exchange, service state and hub are made
afresh), with accounts of its own (``agt-`` names, homes under /tmp/agt-homes), so nothing of a
real deployment on the same machine is touched:
``deploy()`` runs ``hub/deploy.py install``; ``up()`` runs the guide's ``hub/deploy.py up`` command
with the same options and free local ports and waits for the hub and its grading service. The
helpers act as those accounts do: students run nbgrader from the students' venv in their homes,
the instructor from the repository's venv in the course root, the service as its own user.
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
PREFIX = Path("/var/tmp/agt-hub")
HOMES = Path("/tmp/agt-homes")
INSTRUCTOR, GRADER = "agt-teacher", "agt-grader"
STUDENTS_GROUP, STAFF_GROUP = "agt-students", "agt-staff"
PASSWORD = "agt-pass-7"  # every test account's (local accounts on a test machine)
FRESH = ("course", "exchange", "grader", "hub", "secret", "hub.json", "passwords.csv")


def students(n):
    return [f"agt-s{i:02d}" for i in range(1, n + 1)]


def options(csv, protect=False, **ports):
    """hub/deploy.py's options for a test machine: the test prefix and accounts, the students of
    ``csv``, this Python's venv, the repository left readable unless ``protect`` (the deployment's
    default: group staff, 0750; only a test that runs alone asks for it, since it closes the
    working tree that other tests' sandboxes may read); ``ports`` (port=, hub_port=, ...) as
    --port, --hub-port, ..."""
    out = ["--prefix", PREFIX, "--instructor", INSTRUCTOR]
    out += [] if protect else ["--no-protect-repo"]
    out += ["--instructor-password", PASSWORD, "--grader-user", GRADER]
    out += ["--students-group", STUDENTS_GROUP, "--staff-group", STAFF_GROUP]
    out += ["--students", csv, "--home-base", HOMES, "--repo-venv", Path(sys.executable).parents[1]]
    for name, value in ports.items():
        out += [f"--{name.replace('_', '-')}", value]
    return [str(x) for x in out]


def fresh(n_students):
    """A prefix without an earlier run's course, exchange, service state and hub (the students'
    venv and the proxy are kept), fresh homes of existing test accounts -> the students' CSV."""
    for name in FRESH:
        p = PREFIX / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    PREFIX.mkdir(parents=True, exist_ok=True)
    csv = PREFIX / "students.csv"
    csv.write_text("id,password\n" + "".join(f"{s},{PASSWORD}\n" for s in students(n_students)))
    for s in students(n_students):  # no nbgrader cache or server state of an earlier run
        try:
            home = Path(pwd.getpwnam(s).pw_dir)
        except KeyError:
            continue
        for child in home.iterdir() if home.is_dir() else ():
            if child.name not in (".bashrc", ".profile", ".bash_logout"):
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    return csv


def deploy(n_students=4, extra_args=(), config="", protect=False):
    """Deploy for ``n_students`` students (hub/deploy.py install; ``protect``: the repository
    closed to students, as the deployment's default does, until reopen_repo) -> the settings
    (hub.json as a dict); ``config`` is appended to the course's nbgrader_config.py."""
    csv = fresh(n_students)
    was = REPO.stat()
    cmd = [sys.executable, str(REPO / "hub" / "deploy.py"), "install", *options(csv, protect)]
    r = subprocess.run([*cmd, *extra_args], capture_output=True, text=True, timeout=1800)
    if r.returncode:
        raise RuntimeError(f"hub/deploy.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    settings = json.loads((PREFIX / "hub.json").read_text())
    settings["repo_was"] = [was.st_gid, was.st_mode & 0o7777]
    if config:
        with open(Path(settings["course"]) / "nbgrader_config.py", "a") as f:
            f.write(config)
    return settings


def reopen_repo(settings):
    """The repository's group and mode as they were before deploy()."""
    gid, mode = settings["repo_was"]
    os.chown(REPO, -1, gid)
    os.chmod(REPO, mode)


def up(command, n_students, log, timeout=900):
    """Run ``command`` (``python3 hub/deploy.py up --students students.csv``, as the guide
    writes it) from the repository root with the test machine's options, free local ports and
    ``n_students`` students (their CSV in place of students.csv) and wait until the hub and its
    grading service answer -> (settings with "url", the hub's process). JupyterHub runs in the
    foreground of that process: stop_hub() stops it (Ctrl-C) and everything it started."""
    csv = fresh(n_students)
    ports = {k: free_port() for k in ("port", "hub_port", "proxy_api_port", "service_port")}
    words = [str(csv) if w == "students.csv" else w for w in command]
    cmd = [*words, *options(csv, ip="127.0.0.1", **ports)]
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_", "JUPYTER", "COV_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    out = open(log, "ab")
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{ports['port']}"
    t0 = time.monotonic()
    while not answers(f"{url}/hub/health"):
        if proc.poll() is not None or time.monotonic() - t0 > timeout:
            stop_hub(proc)
            raise RuntimeError(f"the hub did not start ({proc.returncode}):\n{tail(log)}")
        time.sleep(0.5)
    settings = json.loads((PREFIX / "hub.json").read_text())
    settings["url"] = url
    service_ready(settings, timeout=max(60, timeout - (time.monotonic() - t0)))
    return settings, proc


def answers(url):
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_hub(proc, timeout=60):
    """Ctrl-C to the hub (it stops the users' servers, the grading service and the proxy it
    started), then end what is left of it and of the test accounts' processes."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    stop(proc)
    end_account_processes()


def end_account_processes():
    """SIGKILL every process that runs as a test account (a user's server or kernel, the grading
    service's judges) -> their pids: the accounts are this test bed's own."""
    uids = set()
    for name in [INSTRUCTOR, GRADER, *students(99)]:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            pass
    killed = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed.append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return killed


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


def instructor_shell(settings, words, check=True, timeout=600):
    """``words`` (a command line of the guide) as the instructor types it in a terminal of
    their JupyterLab: in the course root, the repository's venv first on PATH (``python``,
    ``nbgrader``) and the grader secret in the environment, as hub/jupyterhub_config.py
    sets them."""
    path = f"{Path(settings['repo_venv']) / 'bin'}:/usr/local/bin:/usr/bin:/bin"
    env = {"AUTOGRADER_SECRET_FILE": settings["secret"], "PATH": path}
    return as_user(INSTRUCTOR, words, cwd=settings["course"], env=env, check=check, timeout=timeout)


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
