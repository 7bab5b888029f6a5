#!/usr/bin/env python3
"""The course on JupyterHub, deployed from this repository on a Debian machine (run as root).

    python3 hub/deploy.py up [--prefix /opt/attention-hub] [--port 8000] [--students FILE]

``up`` installs what is missing and starts JupyterHub in the foreground (Ctrl-C stops it and
everything it started). ``install`` does all but the start. Every step is idempotent.

What it sets up (names are options; defaults below):

- Debian packages: bubblewrap, nodejs, npm (tools/sysdeps.sh installs the rest);
  configurable-http-proxy from npm (hub/proxy/package-lock.json) in <prefix>/proxy; the
  students' environment <prefix>/venv (requirements-student.txt + the jupyterhub pin,
  hub/requirements-hub.txt; what the repository's venv has at the same versions is linked from
  there, hub/studentvenv.py), with nbgrader's student extensions only.
- System accounts: groups ``attention-students`` and ``attention-staff``; the instructor
  (``instructor``, staff) and the grading service's user (``attention-grader``, staff, no
  login); students from ``--students`` (CSV: ``id[,password]``; a missing password is made up
  and written to <prefix>/passwords.csv, root only). Every home folder is 0700.
- The instructor's course root <prefix>/course (owned by the instructor, group staff, 2770):
  nbgrader_config.py loads this repository's exercises/nbgrader_config.py and adds the hub's
  settings (written once: the instructor edits it, e.g. ``c.InstantFeedback.assignments``);
  source/ copied from exercises/source.
- nbgrader's exchange <prefix>/exchange (1777) with the course's folder (instructor, group
  staff: inbound readable by staff only, feedback writable by staff).
- The grader secret <prefix>/secret (root:staff 0640): the service and the instructor's
  final grading draw the same check inputs, so their verdicts and messages agree.
- The service's folder <prefix>/grader (attention-grader, 0700).
- <prefix>/hub.json: what hub/jupyterhub_config.py reads.

The repository itself must not be readable by students (solutions/, the hidden checks):
``--protect-repo`` (default) gives its top folder to group staff, mode 0750 (the students'
servers run from <prefix>/venv, never from the repository).
"""

import argparse
import csv
import grp
import hashlib
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # hub.studentvenv, when run as a script (python3 hub/deploy.py)
from hub import studentvenv  # noqa: E402

HUB = REPO / "hub"
COURSE_ID = "attention-transformers"


def sh(*cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def parse(argv):
    p = argparse.ArgumentParser(prog="hub/deploy.py", description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["install", "up"])
    p.add_argument("--prefix", default="/opt/attention-hub")
    p.add_argument("--ip", default="", help="address the hub listens on (default: all)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--hub-port", type=int, default=8081, help="the hub's internal API port")
    p.add_argument("--proxy-api-port", type=int, default=8001)
    p.add_argument("--service-port", type=int, default=10101, help="the grading service")
    p.add_argument("--instructor", default="instructor")
    p.add_argument("--instructor-password", default="", help="default: made up")
    p.add_argument("--grader-user", default="attention-grader")
    p.add_argument("--students-group", default="attention-students")
    p.add_argument("--staff-group", default="attention-staff")
    p.add_argument("--students", help="CSV of student accounts: id[,password]")
    p.add_argument("--home-base", default="/home", help="where new accounts' homes go")
    p.add_argument("--jobs", type=int, default=0, help="the service's judges (0: cores)")
    p.add_argument("--repo-venv", default=str(REPO / ".venv"))
    p.add_argument(
        "--no-protect-repo",
        dest="protect_repo",
        action="store_false",
        help="leave the repository's mode alone (a test machine)",
    )
    return p.parse_args(argv)


# --- packages --------------------------------------------------------------------------------


def system_packages():
    need = [
        pkg
        for pkg, cmd in (("bubblewrap", "bwrap"), ("nodejs", "node"), ("npm", "npm"))
        if shutil.which(cmd) is None
    ]
    if need:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        sh("apt-get", "update", "-qq", env=env)
        sh("apt-get", "install", "-y", "-qq", "--no-install-recommends", *need, env=env)


def digest(*paths):
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def proxy(prefix):
    """configurable-http-proxy from npm, exactly as hub/proxy/package-lock.json pins it."""
    dest = prefix / "proxy"
    stamp = dest / ".stamp"
    want = digest(HUB / "proxy" / "package.json", HUB / "proxy" / "package-lock.json")
    exe = dest / "node_modules" / ".bin" / "configurable-http-proxy"
    if exe.exists() and stamp.exists() and stamp.read_text() == want:
        return exe
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(HUB / "proxy" / name, dest / name)
    sh("npm", "ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error", cwd=dest)
    stamp.write_text(want)
    return exe


def student_venv(prefix, repo_venv):
    """The students' Python: requirements-student.txt + jupyterhub (hub/requirements-hub.txt),
    the distributions the repository's venv has at the same versions linked from there
    (hub/studentvenv.py), nbgrader's student extensions only, and the course's exchange
    settings for every student."""
    venv = prefix / "venv"
    stamp = venv / ".stamp"
    inputs = [HUB / "requirements-hub.txt", REPO / "requirements-student.txt", studentvenv.LOCK]
    want = digest(*(p for p in inputs if p.exists()))
    py = venv / "bin" / "python"
    if not (py.exists() and stamp.exists() and stamp.read_text() == want):
        if venv.exists():
            shutil.rmtree(venv)
        t0 = time.monotonic()
        done = studentvenv.build(venv, donor=repo_venv)
        print(
            f"students' venv in {time.monotonic() - t0:.0f} s "
            f"({'hub/requirements-students.lock' if done['locked'] else 'resolved by pip'}): "
            f"{len(done['linked'])} distributions linked from {repo_venv}, installed: "
            f"{' '.join(done['installed'])}",
            flush=True,
        )
        instructor_only(venv)
        stamp.write_text(want)
    return venv


def instructor_only(venv):
    """nbgrader's instructor tools off in the students' environment (what `jupyter server
    extension disable --sys-prefix` and `jupyter labextension disable --level=sys_prefix`
    write, without starting Jupyter four times)."""
    etc = venv / "etc" / "jupyter"
    server = {f"nbgrader.server_extensions.{x}": False for x in ("formgrader", "course_list")}
    replace_text(
        etc / "jupyter_server_config.d" / "zz-course-students.json",
        json.dumps({"ServerApp": {"jpserver_extensions": server}}, indent=1),
    )
    tools = ("formgrader", "course_list", "create_assignment")
    lab = {f"@jupyter/nbgrader:{x}": True for x in tools}
    replace_text(
        etc / "labconfig" / "page_config.json", json.dumps({"disabledExtensions": lab}, indent=1)
    )


def replace_text(path, text):
    """Write ``path`` anew (a new file renamed over the old one): a file of the students' venv
    may be a hard link into the repository's venv, which must stay as it is."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.new")
    tmp.write_text(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


# --- accounts --------------------------------------------------------------------------------


def ensure_group(name):
    try:
        grp.getgrnam(name)
    except KeyError:
        sh("groupadd", name)


def ensure_user(name, groups, home_base, system=False, password=None):
    """A local account with a private (0700) home folder, in ``groups``."""
    try:
        info = pwd.getpwnam(name)
    except KeyError:
        cmd = ["useradd", "--create-home", "--base-dir", home_base, "--shell", "/bin/bash"]
        if system:
            cmd = ["useradd", "--system", "--create-home", "--base-dir", home_base]
            cmd += ["--shell", "/usr/sbin/nologin"]
        sh(*cmd, "--groups", ",".join(groups), name)
        info = pwd.getpwnam(name)
    else:
        sh("usermod", "--append", "--groups", ",".join(groups), name)
    os.chmod(info.pw_dir, 0o700)
    if password:
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    return info


def students_csv(path):
    """[(id, password or None)] from a CSV of id[,password] (a header row 'id' is skipped)."""
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.reader(f):
            if not row or not row[0].strip() or row[0].strip().lower() == "id":
                continue
            rows.append((row[0].strip(), (row[1].strip() if len(row) > 1 else "") or None))
    return rows


def accounts(args, prefix):
    os.makedirs(args.home_base, mode=0o755, exist_ok=True)
    ensure_group(args.students_group)
    ensure_group(args.staff_group)
    made = {}
    password = args.instructor_password or None
    if password is None and not user_exists(args.instructor):
        password = made[args.instructor] = secrets.token_urlsafe(9)
    ensure_user(args.instructor, [args.staff_group], args.home_base, password=password)
    ensure_user(args.grader_user, [args.staff_group], args.home_base, system=True)
    for sid, pw in students_csv(args.students) if args.students else []:
        if pw is None and not user_exists(sid):
            pw = made[sid] = secrets.token_urlsafe(9)
        ensure_user(sid, [args.students_group], args.home_base, password=pw)
    if made:
        out = prefix / "passwords.csv"
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a") as f:
            for name, pw in made.items():
                f.write(f"{name},{pw}\n")
        print(f"new accounts' passwords: {out} (root only)")


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


# --- the course ------------------------------------------------------------------------------

COURSE_CONFIG = '''"""nbgrader configuration of the course on JupyterHub (written once by
hub/deploy.py; yours to edit). The grading configuration: the repository's
exercises/nbgrader_config.py."""

c = get_config()  # noqa: F821
load_subconfig({base!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.groupshared = True  # the grading service (group {staff}) shares the exchange
c.Exchange.root = {exchange!r}
# feedback of a notebook submitted under another name reaches its student
c.ExchangeFactory.release_feedback = "autograder.service.exchange.ReleaseFeedback"

# Instant feedback (the grading service): the assignments whose submissions are graded at once,
# how many submissions a day per student and assignment, and what the page shows ("full": the
# page the final grading writes; "score": points only).
c.InstantFeedback.assignments = []
c.InstantFeedback.attempts_per_day = 10
c.InstantFeedback.show = "full"
'''

STUDENT_CONFIG = '''"""nbgrader settings of every student on this hub (written by hub/deploy.py)."""

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
'''


def chown(path, user, group, mode):
    shutil.chown(path, user, group)
    os.chmod(path, mode)


def course(args, prefix, venv):
    staff, instructor = args.staff_group, args.instructor
    exchange = prefix / "exchange"
    exchange.mkdir(parents=True, exist_ok=True)
    chown(exchange, "root", "root", 0o1777)
    course_dir = exchange / COURSE_ID
    course_dir.mkdir(exist_ok=True)
    chown(course_dir, instructor, staff, 0o2775)
    for name, mode in (("outbound", 0o2775), ("inbound", 0o2773), ("feedback", 0o2771)):
        (course_dir / name).mkdir(exist_ok=True)
        chown(course_dir / name, instructor, staff, mode)

    root = prefix / "course"
    root.mkdir(exist_ok=True)
    chown(root, instructor, staff, 0o2770)
    config = root / "nbgrader_config.py"
    if not config.exists():
        config.write_text(
            COURSE_CONFIG.format(
                base=str(REPO / "exercises" / "nbgrader_config.py"),
                root=str(root),
                course_id=COURSE_ID,
                staff=staff,
                exchange=str(exchange),
            )
        )
    if not (root / "source").exists():
        shutil.copytree(REPO / "exercises" / "source", root / "source")
    sh("chown", "-R", f"{instructor}:{staff}", root)
    sh("chmod", "-R", "g+rwX,o-rwx", root)

    secret = prefix / "secret"
    if not secret.exists():
        secret.write_text(f"{secrets.randbits(62)}\n")
    chown(secret, "root", staff, 0o640)

    state = prefix / "grader"
    state.mkdir(exist_ok=True)
    chown(state, args.grader_user, args.grader_user, 0o700)

    replace_text(
        venv / "etc" / "jupyter" / "nbgrader_config.py",
        STUDENT_CONFIG.format(course_id=COURSE_ID, exchange=str(exchange)),
    )
    return root, exchange, secret, state


def interpreters_reachable(*venvs):
    """Every account runs Python from these venvs: the folders above their interpreter (e.g.
    a pyenv Python under /root, mode 0700) get o+x, traversal only (nothing becomes
    listable or readable)."""
    for venv in venvs:
        exe = Path(os.path.realpath(Path(venv) / "bin" / "python"))
        base = subprocess.run(
            [str(exe), "-c", "import sys; print(sys.base_prefix)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for target in (exe, Path(base) / "lib", Path(venv).resolve() / "bin"):
            for folder in reversed(Path(target).parents):
                mode = folder.stat().st_mode
                if not mode & 0o001:
                    print(f"+ chmod o+x {folder}  (the course's accounts run {exe})")
                    os.chmod(folder, mode | 0o001)


def protect(repo, staff):
    """The repository's top folder: group ``staff``, 0750 (students cannot enter it)."""
    shutil.chown(repo, group=staff)
    os.chmod(repo, 0o750)


def install(args):
    if os.geteuid() != 0:
        sys.exit("hub/deploy.py sets up system accounts and folders: run it as root")
    prefix = Path(args.prefix).resolve()
    prefix.mkdir(parents=True, exist_ok=True)
    os.chmod(prefix, 0o755)
    system_packages()
    if not (Path(args.repo_venv) / "bin" / "python").exists():
        sh("make", "venv", cwd=REPO)  # the repository's venv: the instructor's and the service's
    chp = proxy(prefix)
    venv = student_venv(prefix, Path(args.repo_venv))
    interpreters_reachable(args.repo_venv, venv)
    accounts(args, prefix)
    root, exchange, secret, state = course(args, prefix, venv)
    if args.protect_repo:
        protect(REPO, args.staff_group)
    hub_state = prefix / "hub"
    hub_state.mkdir(exist_ok=True)
    os.chmod(hub_state, 0o700)
    settings = {
        "ip": args.ip,
        "port": args.port,
        "hub_port": args.hub_port,
        "proxy_api_port": args.proxy_api_port,
        "service_port": args.service_port,
        "state": str(hub_state),
        "chp": str(chp),
        "student_venv": str(venv),
        "repo_venv": str(Path(args.repo_venv).resolve()),
        "course": str(root),
        "exchange": str(exchange),
        "secret": str(secret),
        "grader_state": str(state),
        "grader_user": args.grader_user,
        "instructor": args.instructor,
        "students_group": args.students_group,
        "staff_group": args.staff_group,
        "jobs": args.jobs,
    }
    path = prefix / "hub.json"
    path.write_text(json.dumps(settings, indent=1))
    return path


def up(args):
    settings = install(args)
    env = dict(os.environ, COURSE_HUB_SETTINGS=str(settings))
    hub = Path(args.repo_venv) / "bin" / "jupyterhub"
    cmd = [str(hub), "-f", str(HUB / "jupyterhub_config.py")]
    print("+", " ".join(cmd), flush=True)
    os.chdir(settings.parent / "hub")
    os.execve(cmd[0], cmd, env)


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.command == "install":
        print(install(args))
    else:
        up(args)


if __name__ == "__main__":
    main()
