"""Benchmark: the same synthetic class graded through Dask with 1 and with 2 worker processes.

    python -m bench.cluster [--students 48] [--assignments softmax masking] [--threads 1]

Builds one course from exercises/source/ with bench.grading's functions (correct, wrong, blank
and hostile submissions), then, for 1 and for 2 workers, starts a ``dask.distributed``
LocalCluster of that many worker processes (``--threads`` judges each) on this machine and
times ``python -m autograder grade <assignments> --scheduler ADDRESS`` end to end: the
command's start, the workers' judges starting (their imports and sandboxes), grading, and the
gradebook written by nbgrader in the command. The cluster itself is started before the clock
(on a real cluster the workers run already). Both runs use the same run seed: their grades must
be identical, which is checked. Prints both times and the speed-up; it approaches 2 when the
machine has free cores for both workers (each judge needs about one core, its sandbox child
another at times) and the command's gradebook phase (serial) is small next to grading.

It also prints how many cores each run kept busy (the machine's busy CPU time from /proc/stat over
the wall time, so run it on a quiet machine) and the speed-up the cores allow: a machine with
``c`` cores can run 2 workers at most ``min(2, c / u)`` times as fast as 1 worker that keeps ``u``
cores busy. A speed-up close to that bound means the grading scales with the cores it is given.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.grading import KINDS, assignments, course_env, make_course, nbgrader, populate

DEFAULT_ASSIGNMENTS = ["softmax", "masking"]


def synthetic_class(root, names, students, kinds=KINDS, env=None):
    """A course at ``root`` (the engine's nbgrader_config.py) with ``names`` released and
    ``students`` submissions of each, of kinds ``kinds`` in turn (bench.grading.populate)."""
    env = env or course_env()
    make_course(Path(root), names, engine=True)
    for name in names:
        nbgrader(["generate_assignment", name, "--force"], root, env)
    populate([Path(root)], names, students, kinds)
    return root


def gradebook_rows(url):
    """Sorted (assignment, student, notebook, test cell, auto_score) of every graded cell, read
    back through nbgrader's Gradebook API (SQLite or PostgreSQL url)."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    with Gradebook(url) as gb:
        for assignment in gb.assignments:
            for notebook in assignment.notebooks:
                for student in gb.students:
                    try:
                        sub = gb.find_submission_notebook(
                            notebook.name, assignment.name, student.id
                        )
                    except MissingEntry:
                        continue
                    for g in sub.grades:
                        rows.append(
                            (assignment.name, student.id, notebook.name, g.name, g.auto_score)
                        )
    return sorted(rows)


def busy_cpu_seconds():
    """CPU seconds this machine has spent busy since boot (all cores, every process), from
    /proc/stat; None where there is no /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def grade_command(names, *options):
    return [sys.executable, "-m", "autograder", "grade", *names, "--quiet", *options]


def grade_on_cluster(course, names, workers, threads, run_seed, env=None):
    """(seconds, busy CPU seconds of the machine or None, command output) of grading ``names``
    on a fresh LocalCluster of ``workers`` processes with ``threads`` threads (= judges) each."""
    from distributed import LocalCluster

    env = env or course_env()
    with LocalCluster(
        n_workers=workers,
        threads_per_worker=threads,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        cmd = grade_command(
            names, "--scheduler", cluster.scheduler_address, "--run-seed", str(run_seed)
        )
        t, cpu = time.perf_counter(), busy_cpu_seconds()
        r = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t
        cpu = None if cpu is None else busy_cpu_seconds() - cpu
    if r.returncode != 0:
        sys.exit(f"grading on {workers} worker(s) failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    return seconds, cpu, r.stdout


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.cluster")
    p.add_argument("--students", type=int, default=48)
    p.add_argument("--threads", type=int, default=1, help="threads (= judges) per worker")
    p.add_argument("--assignments", nargs="+", default=DEFAULT_ASSIGNMENTS)
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS, help="kinds of submission")
    p.add_argument("--run-seed", type=int, default=20260)
    p.add_argument("--keep", action="store_true", help="keep the temporary course")
    args = p.parse_args(argv)
    unknown = set(args.assignments) - set(assignments())
    if unknown:
        sys.exit(f"no such assignment(s): {', '.join(sorted(unknown))}")
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    course = work / "course"
    try:
        synthetic_class(course, args.assignments, args.students, args.kinds)
        n = args.students * len(args.assignments)
        print(
            f"{args.students} students x {len(args.assignments)} assignments "
            f"({', '.join(args.assignments)}) = {n} notebooks; {os.cpu_count()} cores here"
        )
        times, busy, grades = {}, {}, {}
        for workers in (1, 2):
            seconds, cpu, out = grade_on_cluster(
                course, args.assignments, workers, args.threads, args.run_seed
            )
            times[workers] = seconds
            busy[workers] = None if cpu is None else cpu / seconds
            grades[workers] = gradebook_rows(f"sqlite:///{course / 'gradebook.db'}")
            phases = [float(m) for m in re.findall(r"^과제 .*를 ([0-9.]+)초 동안", out, re.M)]
            print(
                f"{workers} Dask worker(s) x {args.threads} thread(s): {seconds:8.1f} s "
                f"({n / seconds:.2f} notebooks/s; gradebook phases {sum(phases):.1f} s, the "
                f"rest is start-up: command, workers' judges and sandboxes)"
            )
            if busy[workers] is not None:
                print(f"    cores kept busy: {busy[workers]:.2f} of {os.cpu_count()}")
        same = grades[1] == grades[2] and len(grades[1]) > 0
        speedup = times[1] / times[2]
        print(f"speed-up 2 workers / 1 worker: {speedup:.2f}x")
        if busy[1]:
            bound = min(2.0, os.cpu_count() / busy[1])
            print(
                f"bound set by this machine's cores: {bound:.2f}x (1 worker kept {busy[1]:.2f} "
                f"cores busy); speed-up / bound = {speedup / bound:.2f}"
            )
        print(f"identical grades: {'yes' if same else 'NO'} ({len(grades[1])} graded cells)")
        if not same:
            sys.exit(1)
    finally:
        if args.keep:
            print(f"course kept under {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
