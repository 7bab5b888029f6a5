"""Benchmark: instant feedback on the hub, from submission to feedback fetchable.

    sudo .venv/bin/python -m bench.hub_latency [--single 7] [--burst 30] [--within 10]

Deploys the course on this machine (hub/testbed.py: test accounts, the students' venv in
/var/tmp/agt-hub), opens ``softmax`` for instant feedback and starts the grading service as its
own user with one judge per core. Then:

- single: ``--single`` submissions, one at a time on an idle service;
- burst: ``--burst`` students submit within ``--within`` seconds (evenly spread).

A submission is made as its student, with exactly the files, folder names and permissions that
``nbgrader submit`` writes into the exchange and the student's cache (SUBMIT below; the
JupyterLab button runs that same code in the student's server); it counts from the moment its
folder is complete until its feedback page is in the exchange, where Fetch Feedback finds it.
The notebooks are correct solutions and, for every third student, one catalogued mistake.
Goals on the 2-core machine: median of the single ones <= 5 s; every one of the burst <= 60 s.
"""

import argparse
import json
import pwd
import statistics
import threading
import time
from pathlib import Path

from hub import testbed as tb
from tests.hub import submissions as subs

# what nbgrader/exchange/default/submit.py (0.9.6) writes, run as the student
SUBMIT = r"""
import base64, datetime, os, secrets, shutil, sys, time
inbound, cache, src, student = sys.argv[1:5]
ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
name = f"{student}+softmax+{ts}"
dest = os.path.join(inbound, name + "+" + base64.urlsafe_b64encode(os.urandom(9)).decode())
secret = secrets.token_hex(64)
for target in (dest, os.path.join(cache, name)):
    shutil.copytree(src, target)
    with open(os.path.join(target, "timestamp.txt"), "w") as f:
        f.write(ts)
    with open(os.path.join(target, "submission_secret.txt"), "w") as f:
        f.write(secret)
    if target == dest:
        for entry in os.listdir(dest):
            os.chmod(os.path.join(dest, entry), 0o644)
        os.chmod(dest, 0o777)
print(time.time(), secret)
"""


def prepare(settings, students):
    """Each student's softmax folder (as fetch_assignment leaves it) with a notebook of its own
    kind."""
    release = json.loads((Path(settings["course"]) / "release/softmax/softmax.ipynb").read_text())
    for i, s in enumerate(students):
        folder = Path(pwd.getpwnam(s).pw_dir) / "softmax"
        tb.as_user(s, ["mkdir", "-p", folder])
        nb = subs.filled(release, softmax=subs.NAIVE) if i % 3 == 2 else subs.filled(release)
        tb.write_notebook(s, folder / "softmax.ipynb", nb)


def submit(settings, student):
    """-> (time the submission was complete, its secret)."""
    home = Path(pwd.getpwnam(student).pw_dir)
    inbound = Path(settings["exchange"]) / "attention-transformers" / "inbound"
    cache = home / ".local/share/jupyter/nbgrader_cache/attention-transformers"
    tb.as_user(student, ["mkdir", "-p", cache])
    r = tb.as_user(student, ["python3", "-c", SUBMIT, inbound, cache, home / "softmax", student])
    done, secret = r.stdout.split()
    return float(done), secret


def latency(settings, student, timeout=300):
    t0, secret = submit(settings, student)
    return tb.wait_released(settings, secret, "softmax", timeout=timeout) - t0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.hub_latency")
    p.add_argument("--single", type=int, default=7)
    p.add_argument("--burst", type=int, default=30)
    p.add_argument("--within", type=float, default=10.0)
    p.add_argument("--jobs", type=int, default=0, help="judges (default: cores)")
    args = p.parse_args(argv)
    n = max(args.burst, args.single)
    settings = tb.deploy(n)
    tb.open_for_feedback(settings, ["softmax"], attempts=1000)
    tb.release(settings, "softmax")
    students = tb.students(n)
    prepare(settings, students)
    proc = tb.start_service(settings, jobs=args.jobs or None)
    try:
        t0 = time.monotonic()
        tb.service_ready(settings)
        print(f"service ready in {time.monotonic() - t0:.1f} s")
        single = [latency(settings, students[i % n]) for i in range(args.single)]
        print(
            f"single, idle service: median {statistics.median(single):.2f} s "
            f"(min {min(single):.2f}, max {max(single):.2f}; {args.single} submissions)"
        )
        results = {}

        def one(i, s):
            time.sleep(i * args.within / max(1, args.burst))
            results[s] = latency(settings, s)

        threads = [threading.Thread(target=one, args=(i, s)) for i, s in enumerate(students)]
        t0 = time.monotonic()
        for t in threads[: args.burst]:
            t.start()
        for t in threads[: args.burst]:
            t.join()
        wall = time.monotonic() - t0
        vals = sorted(results.values())
        print(
            f"burst of {len(vals)} within {args.within:g} s: median "
            f"{statistics.median(vals):.1f} s, max {max(vals):.1f} s, all served {wall:.1f} s "
            "after the first submission"
        )
        print(
            f"goals: single median <= 5 s: {statistics.median(single) <= 5}; "
            f"every burst submission <= 60 s: {max(vals) <= 60}"
        )
    finally:
        tb.stop(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
