"""Probe 'assignment': reads the sandbox's limits from inside a worker (run before any hostile
code). The probe cell gets the host paths and port substituted for __REPO__, __COURSE__ and
__PORT__ by tests/adversarial/test_redteam.py."""

from autograder.judge.checking import fail

PROBE = r"""
import os, resource, socket

def limits():
    repo, course, port = "__REPO__", "__COURSE__", __PORT__
    def soft(r):
        return int(resource.getrlimit(r)[0])
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        net = True
    except OSError:
        net = False
    return {
        "data": soft(resource.RLIMIT_DATA),
        "nproc": soft(resource.RLIMIT_NPROC),
        "cpu": soft(resource.RLIMIT_CPU),
        "fsize": soft(resource.RLIMIT_FSIZE),
        "uid": os.getuid(),
        "repo_visible": os.path.exists(repo),
        "course_visible": os.path.exists(course),
        "net": net,
    }
"""


def test_limits(student):
    got = student.call("limits")
    if not isinstance(got, dict):
        fail(f"probe returned {got!r}")
    gib = 1 << 30
    problems = []
    if not 0 < got["data"] <= 4 * gib:
        problems.append(f"RLIMIT_DATA {got['data']}")
    if not 0 < got["nproc"] <= 64:
        problems.append(f"RLIMIT_NPROC {got['nproc']}")
    if not 0 < got["cpu"] <= 60:
        problems.append(f"RLIMIT_CPU {got['cpu']}")
    if not 0 < got["fsize"] <= 64 << 20:
        problems.append(f"RLIMIT_FSIZE {got['fsize']}")
    if got["uid"] == 0:
        problems.append("worker runs as root")
    for key in ("repo_visible", "course_visible", "net"):
        if got[key] is not False:
            problems.append(key)
    if problems:
        fail("sandbox limits not in place: " + ", ".join(problems))
